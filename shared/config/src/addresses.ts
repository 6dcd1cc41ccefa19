import { isIP } from 'node:net';

/** `10.0.0.1`, `fd00::1`, `10.0.0.0/8` or `fd00::/8`: what a trusted-proxy list may hold. */
export function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
