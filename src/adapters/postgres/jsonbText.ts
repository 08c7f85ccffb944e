/** A lone half of a surrogate pair (a text cut between the two), which jsonb refuses. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` as a text or jsonb value can hold it: neither holds a NUL character, and jsonb no half
 * of a surrogate pair (an answer cut inside an emoji, a platform's garbage error); each is stored
 * as U+FFFD instead of failing the save.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

/** The JSON text of `value` for a jsonb column, every string in it storable (storableText). */
export function jsonbText(value: unknown): string {
  return JSON.stringify(value, (_key, each: unknown) => (typeof each === 'string' ? storableText(each) : each));
}
