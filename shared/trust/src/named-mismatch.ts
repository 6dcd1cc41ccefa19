import { readSignedIntent } from './bundle.ts';
import { payloadOf } from './dsse.ts';
import { renderInputsMismatch, type RenderInputDigest } from './render-inputs.ts';
import { intentStatementSchema } from './statement.ts';

/**
 * Which relayed input is not one the signature's statement names, read without verifying it: only
 * to say, in a refusal already decided (the subject, the digest of the inputs' document, did not
 * match), which input the hub changed. Undefined when the statement cannot be read or names the
 * same inputs.
 */
export function namedInputMismatch(signed: unknown, relayed: readonly RenderInputDigest[], renderer: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(payloadOf(readSignedIntent(signed).envelope).toString('utf8'));
    const statement = intentStatementSchema.safeParse(payload);
    return statement.success ? renderInputsMismatch(statement.data.predicate, relayed, renderer) : undefined;
  } catch {
    return undefined;
  }
}
