/**
 * `__ilike` matching in linear time whatever the pattern: `%` stands for any run of characters
 * (spec 4.0.1's partial match), everything else is literal. Built from user input, a regular
 * expression of `.*` runs backtracks: eight `%a` blocks against a long value blocked the event
 * loop for 95 s. Here the pattern is cut at its wildcards once, and a value is matched by
 * finding each piece after the previous one, leftmost first: with only "any run" wildcards the
 * leftmost match of each piece is never worse than a later one, so one pass decides.
 */

/** A matcher of a lower-cased `%` pattern against lower-cased values. */
export type LikeMatcher = (value: string) => boolean;

/** Compiles a pattern (already lower-cased) into a matcher. */
export function likeMatcher(pattern: string): LikeMatcher {
  if (!pattern.includes('%')) return (v) => v === pattern;
  const pieces = pattern.split('%');
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((p) => p.length > 0);
  const least = first.length + last.length + middle.reduce((n, p) => n + p.length, 0);
  return (v) => {
    if (v.length < least || !v.startsWith(first) || !v.endsWith(last)) return false;
    let at = first.length;
    const end = v.length - last.length;
    for (const piece of middle) {
      const found = v.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
}
