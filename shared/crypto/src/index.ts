export { decrypt, decryptString, encrypt, keyFingerprint, loadWebhookKey, DecryptionError, type WebhookKey } from './envelope.ts';
export { generateSigningSecret, sign, signatureHeaders, InvalidSigningSecretError, type SignInput } from './signing.ts';
export { assertLiteralHostAllowed, guardedLookup, isForbiddenAddress, lookupKeeping, EgressBlockedError } from './egress-guard.ts';
export { headerValueProblem, isValidHeaderValue, MAX_HEADER_VALUE_LENGTH } from './header-value.ts';
export { ENDPOINT, redactEndpoints, sanitizeErrorText, stripControlCharacters, truncate, type SanitizeOptions } from './redact.ts';
export { requireKeyWhenSubscriptionsExist, type KeyGuardLogger } from './key-guard.ts';
