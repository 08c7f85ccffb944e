/**
 * The known name closest to a misspelt one, for "did you mean …?" hints: the fewest single-letter
 * insertions, deletions, substitutions and swaps of two neighbours, ignoring case; failing that,
 * the one known name that begins with the written one (`shutdown_grace` for
 * `shutdown_grace_seconds`). Null when nothing is close enough to be the likely intent. `allowed`
 * is the most edits that still count as close: by default one for every three letters written
 * (at least one).
 */
export function closestName(
  written: string,
  known: readonly string[],
  allowed = Math.max(1, Math.floor(written.length / 3)),
): string | null {
  let best: string | null = null;
  let bestDistance = allowed + 1;
  for (const candidate of known) {
    const distance = editDistance(written.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  if (best !== null || written.length < 4) return best;
  const extended = known.filter((candidate) => candidate.toLowerCase().startsWith(written.toLowerCase()));
  return extended.length === 1 ? extended[0]! : null;
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of one substring). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table: number[][] = Array.from({ length: rows }, (_, row) =>
    Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  for (let row = 1; row < rows; row += 1) {
    for (let column = 1; column < columns; column += 1) {
      const cost = a[row - 1] === b[column - 1] ? 0 : 1;
      let distance = Math.min(table[row - 1]![column]! + 1, table[row]![column - 1]! + 1, table[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1]) {
        distance = Math.min(distance, table[row - 2]![column - 2]! + 1);
      }
      table[row]![column] = distance;
    }
  }
  return table[a.length]![b.length]!;
}
