const LINE_BREAK = /\r|\n/g;
const ESCAPED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r' };

/**
 * `text` with its line breaks written as `\n` and `\r`, as JSON writes them: one log entry stays
 * one line, so that a multi-line answer cannot pass for several entries (or forge one).
 */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAK, (brk) => ESCAPED[brk]!);
}
