/** Response bodies are whatever the server sent; tests assert on their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJson = any;
