/**
 * Characters that act on a terminal or on how text is laid out rather than showing as
 * themselves: C0 controls, DEL and C1 controls (Unicode category Cc; ECMA-48: ESC starts a
 * sequence that can move the cursor, rewrite a line or set the window title), and the
 * bidirectional embeddings, overrides and isolates (Unicode UAX #9), which reorder what a
 * reader sees, so that one name can pass for another ("Trojan Source").
 * They are refused in names and profile fields, and escaped wherever a stored value is printed.
 */
const CONTROL = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;
const CONTROL_ALL = new RegExp(CONTROL.source, 'gu');

export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value);
}

/** `\x1b` for ESC (and any C0, DEL or C1), `\u202e` for a bidi control: visible, never acted on. */
export function escapeControlCharacters(value: string): string {
  return value.replace(CONTROL_ALL, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON text from JSON.stringify with what it leaves raw (DEL, C1, bidi controls) escaped as
 * `\u009b`, so the document still decodes to the stored value. C0 controls it escapes itself
 * inside strings; outside them there are only the line breaks of its indentation.
 */
export function escapeJsonControlCharacters(json: string): string {
  return json.replace(/[\u007F-\u009F\u202A-\u202E\u2066-\u2069]/gu, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}
