import { BrokerError } from '../broker/http.ts';
import { sleep } from './async.ts';

const ATTEMPTS = 3;

/**
 * Posts a claim loop's result (a diagnostic, a preview verdict, a work order's completion). No
 * answer, 429 or 5xx is retried a little (after 0.5 s, then 1 s); a refusal is final. False when
 * the result was not recorded, after `notRecorded` was told why: what happens then (the expiry
 * sweep, the stale-claim release) is the caller's to say.
 */
export async function postResult(post: () => Promise<unknown>, notRecorded: (err: unknown) => void): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await post();
      return true;
    } catch (err) {
      const transient = err instanceof BrokerError && err.transient;
      if (!transient || attempt >= ATTEMPTS) {
        notRecorded(err);
        return false;
      }
      await sleep(500 * attempt);
    }
  }
}
