// Stands in for the `string-width` package in the bundle (scripts/build.mjs). yargs, cliui and
// wrap-ansi import it at start-up, and on import it builds an Intl.Segmenter and compiles
// `/^\p{RGI_Emoji}$/v`: about a third of what `agent cron list` spends starting up, for text
// measured only when help is laid out. Printable ASCII is as wide as it is long; anything else
// goes to the real package, loaded on that first call (require of an ES module, Node 20.19+).
import { createRequire } from 'node:module';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
let measure = null;

export default function stringWidth(text, options) {
  if (typeof text === 'string' && PRINTABLE_ASCII.test(text)) return text.length;
  measure ??= createRequire(import.meta.url)('string-width').default;
  return measure(text, options);
}
