// "Did you mean" for unknown commands, flags and tool ids. Pure.

/** The closest candidate by edit distance, if it is close enough to be a typo. */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  // A different case only (SUMMER for summer) is the nearest, however long the name.
  const folded = input.toLowerCase();
  const sameLetters = candidates.find((c) => c !== input && c.toLowerCase() === folded);
  if (sameLetters !== undefined) return sameLetters;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(input, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(input.length / 3)) ? best : undefined;
}

/** Levenshtein distance between two strings. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

