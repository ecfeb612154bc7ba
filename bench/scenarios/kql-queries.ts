/**
 * @module
 * The KQL benchmark queries: typical dashboard and analyst queries over the bench dataset, each
 * with the same query hand-written in SQL for each database (the baseline of "execution vs
 * hand-written SQL on the same engine"). Hand-written SQL reads the same physical tables (ticks,
 * `NOT NULL` strings) and returns the same rows.
 */
import { T0 } from './kql-dataset.js'

const TICKS_PER_DAY = 864_000_000_000n
const TICKS_PER_HOUR = 36_000_000_000n
const day = (d: number): bigint => T0 + BigInt(d) * TICKS_PER_DAY

export interface BenchQuery {
  readonly id: string
  readonly kql: string
  /** Hand-written SQL per dialect, `{R}`/`{S}` standing for the Readings/Sites tables; the same parameters, in order. */
  readonly sql: { readonly sqlite: string; readonly postgres: string; readonly duckdb: string }
  readonly params: readonly unknown[]
  /** Why the baseline is not an exact equivalent, when it is not. */
  readonly note?: string
}

export const BENCH_QUERIES: readonly BenchQuery[] = [
  {
    id: 'window-count',
    kql: 'Readings | where timestamp between (datetime(2026-01-10) .. datetime(2026-01-11)) | count',
    sql: {
      sqlite: 'SELECT COUNT(*) FROM {R} WHERE "timestamp" BETWEEN ? AND ?',
      postgres: 'SELECT COUNT(*) FROM {R} WHERE "timestamp" BETWEEN $1 AND $2',
      duckdb: 'SELECT COUNT(*) FROM {R} WHERE "timestamp" BETWEEN $1::BIGINT AND $2::BIGINT',
    },
    params: [day(9), day(10)],
  },
  {
    id: 'hourly-avg-week',
    kql: 'Readings | where timestamp >= datetime(2026-01-01) and timestamp < datetime(2026-01-08) | summarize avg(value) by bin(timestamp, 1h)',
    sql: {
      sqlite: 'SELECT "timestamp" / ? * ? AS ts, AVG(value) FROM {R} WHERE "timestamp" >= ? AND "timestamp" < ? GROUP BY ts',
      postgres: 'SELECT "timestamp" / $1 * $2 AS ts, AVG(value) FROM {R} WHERE "timestamp" >= $3 AND "timestamp" < $4 GROUP BY ts',
      duckdb:
        'SELECT "timestamp" // $1::BIGINT * $2::BIGINT AS ts, AVG(value) FROM {R} WHERE "timestamp" >= $3::BIGINT AND "timestamp" < $4::BIGINT GROUP BY ts',
    },
    params: [TICKS_PER_HOUR, TICKS_PER_HOUR, day(0), day(7)],
  },
  {
    id: 'per-sensor-stats',
    kql: 'Readings | summarize n = count(), avg_value = avg(value), max_value = max(value) by sensor',
    sql: {
      sqlite: 'SELECT sensor, COUNT(*), AVG(value), MAX(value) FROM {R} GROUP BY sensor',
      postgres: 'SELECT sensor, COUNT(*), AVG(value), MAX(value) FROM {R} GROUP BY sensor',
      duckdb: 'SELECT sensor, COUNT(*), AVG(value), MAX(value) FROM {R} GROUP BY sensor',
    },
    params: [],
  },
  {
    id: 'sensor-daily',
    kql: 'Readings | where sensor == "s-042" | summarize avg(value) by bin(timestamp, 1d)',
    sql: {
      sqlite: 'SELECT "timestamp" / ? * ? AS d, AVG(value) FROM {R} WHERE sensor = ? GROUP BY d',
      postgres: 'SELECT "timestamp" / $1 * $2 AS d, AVG(value) FROM {R} WHERE sensor = $3 GROUP BY d',
      duckdb: 'SELECT "timestamp" // $1::BIGINT * $2::BIGINT AS d, AVG(value) FROM {R} WHERE sensor = $3::VARCHAR GROUP BY d',
    },
    params: [TICKS_PER_DAY, TICKS_PER_DAY, 's-042'],
  },
  {
    id: 'top-errors',
    kql: 'Readings | where status >= 500 | top 10 by value desc',
    sql: {
      sqlite: 'SELECT "timestamp", sensor, site, value, status, note FROM {R} WHERE status >= ? ORDER BY value DESC LIMIT 10',
      postgres: 'SELECT "timestamp", sensor, site, value, status, note FROM {R} WHERE status >= $1 ORDER BY value DESC NULLS LAST LIMIT 10',
      duckdb:
        'SELECT "timestamp", sensor, site, value, status, note FROM {R} WHERE status >= $1::BIGINT ORDER BY value DESC NULLS LAST LIMIT 10',
    },
    params: [500],
  },
  {
    id: 'contains-by-site',
    kql: 'Readings | where note contains "timeout" | summarize count() by site',
    sql: {
      sqlite: "SELECT site, COUNT(*) FROM {R} WHERE note LIKE '%timeout%' GROUP BY site",
      postgres: "SELECT site, COUNT(*) FROM {R} WHERE note ILIKE '%timeout%' GROUP BY site",
      duckdb: "SELECT site, COUNT(*) FROM {R} WHERE note ILIKE '%timeout%' GROUP BY site",
    },
    params: [],
    note: "baseline LIKE/ILIKE folds case by the database's rules, not Kusto's",
  },
  {
    id: 'has-count',
    kql: 'Readings | where note has "error" | count',
    sql: {
      sqlite: "SELECT COUNT(*) FROM {R} WHERE note LIKE '%error%'",
      postgres: "SELECT COUNT(*) FROM {R} WHERE note ~* '(^|[^[:alnum:]])error($|[^[:alnum:]])'",
      // Kusto's term: letters and digits of any script (the engine answers exactly that)
      duckdb: "SELECT COUNT(*) FROM {R} WHERE regexp_matches(note, '(^|[^\\p{L}\\p{N}])error($|[^\\p{L}\\p{N}])', 'i')",
    },
    params: [],
    note: 'baseline approximates has on SQLite (substring LIKE) and PostgreSQL (an ASCII word-boundary regex); on DuckDB it is exact (Unicode letters and digits as term characters)',
  },
  {
    id: 'join-dimension',
    kql: 'Readings | where timestamp >= datetime(2026-01-20) | summarize n = count() by site | join kind=inner (Sites) on site | project region, site, n',
    sql: {
      sqlite:
        'SELECT s.region, r.site, r.n FROM (SELECT site, COUNT(*) AS n FROM {R} WHERE "timestamp" >= ? GROUP BY site) r JOIN {S} s ON s.site = r.site',
      postgres:
        'SELECT s.region, r.site, r.n FROM (SELECT site, COUNT(*) AS n FROM {R} WHERE "timestamp" >= $1 GROUP BY site) r JOIN {S} s ON s.site = r.site',
      duckdb:
        'SELECT s.region, r.site, r.n FROM (SELECT site, COUNT(*) AS n FROM {R} WHERE "timestamp" >= $1::BIGINT GROUP BY site) r JOIN {S} s ON s.site = r.site',
    },
    params: [day(19)],
  },
  {
    id: 'make-series',
    kql: 'Readings | where sensor in ("s-001", "s-002") and timestamp >= datetime(2026-01-01) and timestamp < datetime(2026-01-08) | make-series avg(value) default=0 on timestamp from datetime(2026-01-01) to datetime(2026-01-08) step 1h by sensor',
    sql: {
      sqlite:
        'SELECT sensor, "timestamp" / ? * ? AS h, AVG(value) FROM {R} WHERE sensor IN (?, ?) AND "timestamp" >= ? AND "timestamp" < ? GROUP BY sensor, h',
      postgres:
        'SELECT sensor, "timestamp" / $1 * $2 AS h, AVG(value) FROM {R} WHERE sensor IN ($3, $4) AND "timestamp" >= $5 AND "timestamp" < $6 GROUP BY sensor, h',
      duckdb:
        'SELECT sensor, "timestamp" // $1::BIGINT * $2::BIGINT AS h, AVG(value) FROM {R} WHERE sensor IN ($3::VARCHAR, $4::VARCHAR) AND "timestamp" >= $5::BIGINT AND "timestamp" < $6::BIGINT GROUP BY sensor, h',
    },
    params: [TICKS_PER_HOUR, TICKS_PER_HOUR, 's-001', 's-002', day(0), day(7)],
    note: 'baseline returns the hourly groups; the engine pushes the same per-sensor, per-hour summarize and builds the series arrays (with default 0 for empty hours) in memory',
  },
  {
    id: 'dcount-by-site',
    kql: 'Readings | where timestamp >= datetime(2026-01-15) | summarize dcount(sensor) by site',
    sql: {
      sqlite: 'SELECT site, COUNT(DISTINCT sensor) FROM {R} WHERE "timestamp" >= ? GROUP BY site',
      postgres: 'SELECT site, COUNT(DISTINCT sensor) FROM {R} WHERE "timestamp" >= $1 GROUP BY site',
      duckdb: 'SELECT site, COUNT(DISTINCT sensor) FROM {R} WHERE "timestamp" >= $1::BIGINT GROUP BY site',
    },
    params: [day(14)],
  },
  {
    id: 'top-sensors',
    kql: 'Readings | summarize n = count() by sensor | top 5 by n desc',
    sql: {
      sqlite: 'SELECT sensor, COUNT(*) AS n FROM {R} GROUP BY sensor ORDER BY n DESC LIMIT 5',
      postgres: 'SELECT sensor, COUNT(*) AS n FROM {R} GROUP BY sensor ORDER BY n DESC LIMIT 5',
      duckdb: 'SELECT sensor, COUNT(*) AS n FROM {R} GROUP BY sensor ORDER BY n DESC LIMIT 5',
    },
    params: [],
  },
]

/** The hand-written SQL with the physical table names filled in. */
export function handSql(q: BenchQuery, dialect: 'sqlite' | 'postgres' | 'duckdb', sqlNames: Readonly<Record<string, string>>): string {
  return q.sql[dialect].replaceAll('{R}', `"${sqlNames['Readings']}"`).replaceAll('{S}', `"${sqlNames['Sites']}"`)
}
