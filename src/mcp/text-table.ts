/**
 * @module
 * Query results as a readable text table for AI clients (the same rows travel as structured
 * content). Cells are single-line and cut at a width, so one long value cannot drown the rest.
 */

import { stringifyExact } from '../shared/exact-json.js'

/** Longest cell shown in the text table (the structured content keeps the full value). */
export const MAX_CELL = 80

function cell(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : stringifyExact(value)
  const flat = text.replace(/\r?\n|\r/g, '⏎').replace(/\|/g, '\\|')
  return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat
}

/** A Markdown table (pipes escaped, columns padded); `(no rows)` under the header when empty. */
export function textTable(columns: readonly string[], rows: readonly Readonly<Record<string, unknown>>[]): string {
  if (columns.length === 0) return '(no columns)'
  const cells = rows.map((row) => columns.map((c) => cell(row[c])))
  const header = columns.map((c) => cell(c))
  const widths = header.map((h, i) => Math.max(3, h.length, ...cells.map((r) => r[i]!.length)))
  const line = (values: readonly string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`
  const out = [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...cells.map(line)]
  if (rows.length === 0) out.push('(no rows)')
  return out.join('\n')
}
