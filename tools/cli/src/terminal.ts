/**
 * The one way out to the terminal. Names, messages, YAML and errors come from the hub, which means
 * from tenants: a terminal acts on control characters instead of showing them (an escape sequence
 * can write the clipboard with OSC 52, clear the screen or move the cursor; a bare `\r` lets later
 * text overwrite what came before). So every byte the CLI writes passes through `neutralise`, and
 * the CLI itself never writes a control character other than the newlines and tabs of its layout
 * (it has no colours).
 */

/**
 * C0 controls but tab and newline, DEL, C1 controls (0x9b is CSI on its own), and the bidi
 * overrides and isolates that make text show in another order than it reads.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same, newline and tab included: a table cell or a `key: value` field is one line. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `\uXXXX`: visible, and the same escape JSON and YAML double-quoted strings use, so a hostile
 * string in `-o json` / `-o yaml` output still parses to the hub's value (render() leaves such
 * strings in quotes).
 */
const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text with every control character a terminal would act on shown as `\uXXXX`; newlines and tabs kept. */
export const neutralise = (text: string): string => text.replace(UNSAFE, escaped);

/** One line of tenant text (a table cell, a field): newlines and tabs shown as escapes too, so no row can be forged. */
export const oneLine = (text: string): string => text.replace(UNSAFE_IN_LINE, escaped);

/** Whether a string holds anything `neutralise` would change (render() quotes such YAML strings). */
export const hasControls = (text: string): boolean => new RegExp(UNSAFE.source).test(text);

export const writeOut = (text: string): void => void process.stdout.write(neutralise(text));
export const writeErr = (text: string): void => void process.stderr.write(neutralise(text));
