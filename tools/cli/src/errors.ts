/**
 * Exit codes, documented in `brokkr --help` and the README: scripts branch on them.
 * 0 success (for `apply --wait`: every agent applied), 1 failure (an API or input error, or an
 * agent reported a failure), 2 timeout (`--wait` gave up before every agent answered).
 */
export const EXIT = { ok: 0, failed: 1, timeout: 2 } as const;

/** An error the user can act on: printed as one line (no stack trace) and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** A hub answer outside 2xx: printed as `<code>: <message>` (the hub's JSON error body). */
export class HubError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly hubMessage: string,
  ) {
    super(`${code}: ${hubMessage}`);
  }
}
