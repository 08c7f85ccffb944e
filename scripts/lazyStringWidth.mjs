// Stands in for the `string-width` package in the bundle (scripts/build.mjs). yargs, cliui and
// wrap-ansi import it at start-up, and on import it builds an Intl.Segmenter and compiles
// `/^\p{RGI_Emoji}$/v`: about a third of what `agent cron list` spends starting up, for text
// measured only when help is laid out. Printable ASCII is as wide as it is long; anything else
// goes to the real package, loaded on that first call (require of an ES module, Node 20.19+).
import { createRequire } from 'node:module';

// Printable ASCII, and the Latin-1 letters and signs and the general punctuation that help text
// uses (dashes, quotes, bullets, the ellipsis) but the soft hyphen and the zero-width marks: each
// one column wide. yargs lays out the help of the command it runs at every start (to have it
// ready should the command fail), and one `…` in a flag's description sent every command to the
// real package.
const ONE_COLUMN_EACH = /^[\x20-\x7e\u00a0-\u00ac\u00ae-\u00ff\u2010-\u2027]*$/;
let measure = null;

export default function stringWidth(text, options) {
  // East Asian "ambiguous" signs are one column unless the caller says otherwise.
  if (typeof text === 'string' && options?.ambiguousIsNarrow !== false && ONE_COLUMN_EACH.test(text)) return text.length;
  measure ??= createRequire(import.meta.url)('string-width').default;
  return measure(text, options);
}
