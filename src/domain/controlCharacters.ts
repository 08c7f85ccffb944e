/** Every C0 control character, DEL and every C1 control character. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every control character (C0, DEL, C1) written out as JSON writes it: `\n`, `\r`
 * and `\t`, the others as `\u001b` (lowercase hex, four digits). Text from a request, a token or
 * a platform's answer then can neither pass for several log lines nor reach a terminal as an
 * escape sequence (colours, a window title, a cleared screen). The characters in `keep` (`'\n'`,
 * or `'\n\t'` where a format has lines) are left as they are. Backslashes are not doubled, so
 * text without control characters comes out unchanged.
 */
/**
 * `text` as a file with lines may hold it: line ends and tabs kept (a CRLF as a plain line end),
 * every other control character escaped as {@link escapeControlCharacters} does. For run reports
 * and records, which quote answers, errors and payloads.
 */
export function printableLines(text: string): string {
  return escapeControlCharacters(text.replace(/\r\n/g, '\n'), '\n\t');
}

export function escapeControlCharacters(text: string, keep = ''): string {
  return text.replace(CONTROL_CHARACTER, (character) => {
    if (keep.includes(character)) return character;
    return SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
