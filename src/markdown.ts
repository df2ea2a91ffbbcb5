/**
 * Markdown and number formatting shared by every report: escaping untrusted text, table rows, and
 * the figures' own formats. A leaf: the result's exports and each workload's report section use it.
 */

/** Stands in for a value that cannot be computed, e.g. a rate over zero time. */
export const MISSING = '–';

/**
 * Escapes untrusted text for Markdown, in a table cell or in running text: line breaks and tabs
 * become spaces (a break would end the table row), other control characters are dropped, and
 * the ASCII punctuation that could start emphasis, code, links, images, HTML, entities or a cell
 * boundary is backslash-escaped (CommonMark allows that before any ASCII punctuation, and GFM tables
 * honour `\|`). Characters that only matter at the start of a line (`#`, `-`, `+`, digits)
 * are left alone, because this text never starts a line.
 */
export function escapeMarkdown(text: string): string {
  return (
    text
      .replace(/\r\n|[\t\r\n\u2028\u2029]/g, ' ')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .replace(/[\\`*_[\]<>|&~!]/g, '\\$&')
  );
}

/** A Markdown table row from cells that are already escaped. */
export function markdownRow(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/**
 * The delimiter row, one letter per column: `l` left-aligns it (text), `r` right-aligns it
 * (numbers, so digits line up in a rendered table).
 */
export function markdownDelimiter(alignment: string): string {
  return markdownRow([...alignment].map((a) => (a === 'r' ? '---:' : '---')));
}

// ---------------------------------------------------------------------------------------------
// Number formatting for the Markdown report

/** Milliseconds with about four significant digits: 123.4, 12.34, 1.234, 0.123. */
export function formatMs(ms: number): string {
  return ms.toFixed(ms >= 100 ? 1 : ms >= 10 ? 2 : 3);
}

export function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : MISSING;
}

/** FLOP per byte spans 0.1 (decode) to hundreds (long prefill). */
export function formatIntensity(n: number): string {
  return fixed(n, n >= 10 ? 1 : 2);
}

/** Dispatches per layer: an integer as it is, anything else with two decimals. */
export function formatPerLayer(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}
