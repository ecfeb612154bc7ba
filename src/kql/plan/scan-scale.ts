/**
 * @module
 * Reading a physical column in the engine's unit (TableScan.sqlScale), shared by the first-phase
 * scan and the pushdown so both read `_ingested_at` (milliseconds on disk) as datetime ticks.
 */

/** `("_ingested_at" * 10000)` for a scale of 10,000; the column itself for none. */
export function scaledColumn(sql: string, scale: number | undefined): string {
  return scale === undefined || scale === 1 ? sql : `(${sql} * ${Math.trunc(scale)})`
}
