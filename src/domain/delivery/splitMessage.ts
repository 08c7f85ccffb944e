/**
 * Splits an answer into parts a platform accepts. A part never exceeds `limit`
 * UTF-16 code units, its ` (i/N)` ending included. Cuts fall at a blank line, else at a line end,
 * else at a space, else anywhere but inside a surrogate pair. A cut inside a fenced code block
 * closes the fence at the end of the part and reopens it, with its language, at the start of the
 * next one, so every part renders on its own. A text that fits is one part, without an ending.
 */
export function splitMessage(text: string, limit: number | null): string[] {
  if (limit === null || text.length <= limit) return [text];
  // The ending's length depends on N; start with one digit and widen until the count fits.
  for (let digits = 1; digits <= 6; digits += 1) {
    const ending = ` (${'9'.repeat(digits)}/${'9'.repeat(digits)})`.length;
    const bodies = cutBodies(text, limit - ending);
    if (String(bodies.length).length <= digits) {
      return bodies.map((body, index) => `${body} (${index + 1}/${bodies.length})`);
    }
  }
  throw new Error(`an answer of ${text.length} characters needs more than 999999 parts of ${limit}`);
}

const FENCE = /^(\s{0,3})(`{3,}|~{3,})(.*)$/;

interface OpenFence {
  /** The line that opened the block, e.g. "```ts", used to reopen it. */
  opener: string;
  /** The marker that closes it, e.g. "```". */
  marker: string;
}

/** The fence left open at the end of `text` when `open` was open at its start. */
function fenceAfter(text: string, open: OpenFence | null): OpenFence | null {
  let state = open;
  for (const line of text.split('\n')) {
    const match = FENCE.exec(line);
    if (!match) continue;
    const marker = match[2]!;
    if (state === null) state = { opener: `${match[2]}${match[3]!.trimEnd()}`, marker };
    else if (marker[0] === state.marker[0] && marker.length >= state.marker.length && match[3]!.trim() === '') state = null;
  }
  return state;
}

function cutBodies(text: string, budget: number): string[] {
  if (budget < 40) throw new Error(`a part limit of ${budget} characters is too small to split an answer`);
  const bodies: string[] = [];
  let rest = text;
  let open: OpenFence | null = null;
  while (rest.length > 0) {
    const prefix = open ? `${open.opener}\n` : '';
    // Room for the reopened fence in front and a closing fence behind, should the cut fall in a block.
    const room = budget - prefix.length;
    if (rest.length <= room) {
      bodies.push(prefix + rest);
      break;
    }
    let cut = cutPoint(rest, room - 4);
    let after = fenceAfter(rest.slice(0, cut.at), open);
    if (after !== null && cut.at + 1 + after.marker.length > room) {
      cut = cutPoint(rest, room - 1 - after.marker.length);
      after = fenceAfter(rest.slice(0, cut.at), open);
    }
    const body = rest.slice(0, cut.at).replace(/\s+$/, '');
    bodies.push(prefix + (after ? `${body}\n${after.marker}` : body));
    rest = rest.slice(cut.at + cut.skip);
    if (after === null) rest = rest.replace(/^\s+/, '');
    open = after;
  }
  return bodies;
}

/**
 * Where to cut `text` so that the first part has at most `room` units and is not too short:
 * `at` is where the part ends, `skip` the separator dropped there.
 */
function cutPoint(text: string, room: number): { at: number; skip: number } {
  const window = text.slice(0, room + 1);
  const minimum = Math.floor(room / 3);
  for (const separator of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= minimum && at <= room) return { at, skip: separator.length };
  }
  const code = text.charCodeAt(room - 1);
  return { at: code >= 0xd800 && code <= 0xdbff ? room - 1 : room, skip: 0 };
}
