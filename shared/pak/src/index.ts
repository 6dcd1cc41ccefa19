export { generatePak, hashLongToken, hashPresentedPak, pakFromAuthorization, type MintedPak } from './pak.ts';
export { base58Encode, BASE58_ALPHABET } from './base58.ts';
