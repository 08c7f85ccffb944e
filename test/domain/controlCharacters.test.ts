import { escapeControlCharacters } from '../../src/domain/controlCharacters.js';

const ESC = '\u001b';

describe('escapeControlCharacters', () => {
  it('writes line breaks and tabs as \\n, \\r and \\t', () => {
    expect(escapeControlCharacters('one\ntwo\r\nthree\tfour')).toBe('one\\ntwo\\r\\nthree\\tfour');
  });

  it('writes every other C0 character, DEL and every C1 character as \\u00xx in lowercase hex', () => {
    expect(escapeControlCharacters(`${ESC}[31mred${ESC}[0m`)).toBe('\\u001b[31mred\\u001b[0m');
    expect(escapeControlCharacters(`${ESC}]0;pwned\u0007`)).toBe('\\u001b]0;pwned\\u0007');
    expect(escapeControlCharacters('a\u0000b\u007fc\u0080d\u009be\u009f')).toBe('a\\u0000b\\u007fc\\u0080d\\u009be\\u009f');
  });

  it('leaves nothing of the ranges U+0000–U+001F, U+007F and U+0080–U+009F', () => {
    const all = Array.from({ length: 0xa0 }, (_, code) => String.fromCharCode(code)).join('');

    const escaped = escapeControlCharacters(all);

    expect(escaped).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(escaped).toContain(' !"#$%&');
    expect(escaped).toContain('xyz{|}~');
  });

  it('leaves text without control characters unchanged, backslashes, accents and emoji included', () => {
    const text = 'C:\\jobs\\report — déjà vu ✓ 🚀 \u00a0non-breaking';

    expect(escapeControlCharacters(text)).toBe(text);
  });

  it('keeps the characters it is told to keep, for formats that have lines', () => {
    expect(escapeControlCharacters(`first\n\tsecond${ESC}[2J\r`, '\n\t')).toBe('first\n\tsecond\\u001b[2J\\r');
  });

  it('is the inverse of JSON parsing for the characters it escapes', () => {
    const text = `kid ${ESC}[31m ${ESC}]0;title\u0007 \u0000 \u0085 \n`;

    expect(JSON.parse(`"${escapeControlCharacters(text)}"`)).toBe(text);
  });
});
