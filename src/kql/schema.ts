/**
 * @module
 * What the engine needs to know about the workspace's tables. Plain data (structured-clonable), so
 * a query worker thread can receive it with the query text.
 */
import type { KqlType } from './types.js'

export interface KqlColumn {
  readonly name: string
  readonly type: KqlType
}

export interface KqlTable {
  /** The KQL table name (case-sensitive, as Kusto). */
  readonly name: string
  /** Columns in declaration order: what `T | take 1` returns. */
  readonly columns: readonly KqlColumn[]
  /**
   * Columns that can be named explicitly (`T | project _rowid, Value`) but are not part of the
   * table's default column set (`*`, `take`, `getschema` leave them out).
   */
  readonly hiddenColumns?: readonly KqlColumn[]
  /** The physical table name in the SQL database; the dialect quotes it. */
  readonly sqlName: string
  /** Physical column name per KQL column name, when they differ. */
  readonly sqlColumns?: Readonly<Record<string, string>>
  /**
   * Per KQL column name: the physical integer times this factor is the engine's value. A datetime
   * stored as milliseconds since the epoch has 10,000 (ticks per millisecond): `_ingested_at`.
   */
  readonly sqlScale?: Readonly<Record<string, number>>
}

export interface KqlSchema {
  readonly tables: readonly KqlTable[]
}

export const EMPTY_SCHEMA: KqlSchema = { tables: [] }
