// fatal: invalid byte sequences are an error, not U+FFFD. ignoreBOM: keep a leading BOM in the
// text, so the stored content (and its checksum) is byte for byte what the client sent.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text, or undefined when it is not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
