/**
 * @module
 * The query endpoints' JSON shape of a result (design §5): `{ columns: [{name, type}], results:
 * [row objects keyed by column name] }`, values in their wire form (values.ts toWireValue).
 */
import type { QueryResult } from './engine-types.js'
import type { KqlType } from './types.js'
import { toWireValue } from './values.js'

export interface WireRows {
  readonly columns: readonly { readonly name: string; readonly type: KqlType }[]
  readonly results: readonly Record<string, unknown>[]
}

export function toWireRows(result: Pick<QueryResult, 'columns' | 'rows'>): WireRows {
  const columns = result.columns.map((c) => ({ name: c.name, type: c.type }))
  const results = result.rows.map((row) => {
    // Object.create(null) would print oddly; a plain object with own keys keeps column order
    const o: Record<string, unknown> = {}
    columns.forEach((c, i) => {
      o[c.name] = toWireValue(c.type, row[i] ?? null)
    })
    return o
  })
  return { columns, results }
}
