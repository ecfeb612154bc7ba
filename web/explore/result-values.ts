/**
 * Result values as the server sent them. The answer is parsed with lossless-json, so every number
 * keeps its exact digits (a 64-bit long never passes through a JS number); cells, CSV and JSONL all
 * show those digits. Only the chart converts to numbers.
 */
import { isLosslessNumber, parse, stringify } from 'lossless-json'

export interface ResultColumn {
  readonly name: string
  readonly type: string
}

export interface QueryResult {
  readonly columns: readonly ResultColumn[]
  readonly results: readonly Record<string, unknown>[]
  readonly rowCount: number
  readonly truncated: boolean
  readonly rowCap: number
  readonly visualization?: { readonly kind: string; readonly properties: Record<string, unknown> }
}

export function parseResult(text: string): unknown {
  return parse(text)
}

export const NUMERIC_TYPES = new Set(['int', 'long', 'real', 'decimal'])

/** The text a cell shows (and CSV carries): digits as sent, dynamic values as JSON, null as empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (isLosslessNumber(value)) return value.value
  if (typeof value === 'object') return stringify(value) ?? ''
  return String(value)
}

/** A number for charts (NaN when the value is not one). */
export function chartNumber(value: unknown): number {
  if (isLosslessNumber(value)) return Number(value.value)
  if (typeof value === 'number') return value
  if (typeof value === 'string' && value.trim() !== '') return Number(value)
  return Number.NaN
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** RFC 4180 CSV: a header of column names, then one line per row with each cell's text. */
export function toCsv(result: QueryResult): string {
  const lines = [result.columns.map((c) => csvField(c.name)).join(',')]
  for (const row of result.results) lines.push(result.columns.map((c) => csvField(cellText(row[c.name]))).join(','))
  return `${lines.join('\r\n')}\r\n`
}

/** One JSON object per line, columns in result order, numbers with their exact digits. */
export function toJsonl(result: QueryResult): string {
  return result.results
    .map((row) => stringify(Object.fromEntries(result.columns.map((c) => [c.name, row[c.name] ?? null]))))
    .join('\n')
    .concat(result.results.length > 0 ? '\n' : '')
}

/** A curl command for the same query with a placeholder token (the API's ad-hoc route, spec 4.1). */
export function curlCommand(apiBase: string, query: string): string {
  const body = JSON.stringify({ Query: query }).replace(/'/g, `'\\''`)
  return `curl -X POST '${apiBase}/oi-api/warm-queries' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data '${body}'`
}
