/** Columns for a terminal: each as wide as its widest cell, two spaces apart. */
export function formatTable(headers: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}
