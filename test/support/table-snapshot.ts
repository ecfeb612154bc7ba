/**
 * @module
 * A snapshot of every table of a test server's database (both backends), to prove that refused
 * writes changed nothing. What legitimately changes while a server answers refusals is left out,
 * each for a stated reason:
 * - activity-log `api-call` records (every authenticated call is recorded, refused or not), the
 *   `container-checkpoint` records of the heads log that follow each flush, and `sign-in-refused` /
 *   `sign-in-throttled` decisions (the portal records each refused sign-in on purpose); every other activity-log
 *   record (decisions, appended events, corrections) is compared;
 * - `ledger_heads`, `ledger_nodes`, `ledger_checkpoints`: derived from the records (tip, Merkle
 *   nodes, signed notes), so they advance with the call records; the chains are verified instead;
 * - `tokens.last_used_at` and `portal_sessions.last_seen_at`: touched by authenticated requests;
 * - `portal_login_failures`: refused sign-ins are counted there on purpose (the throttle).
 */
import type { RawDatabase } from './raw-database.js'

const SKIPPED_TABLES = new Set(['ledger_heads', 'ledger_nodes', 'ledger_checkpoints', 'portal_login_failures'])
const SKIPPED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  tokens: ['last_used_at'],
  portal_sessions: ['last_seen_at'],
}
const CALL_RECORD_TYPES = ['api-call', 'container-checkpoint']
/** Refused sign-ins are recorded on purpose (who tried, from where): a record of the refusal, not a change. */
const REFUSAL_ACTIONS = ['sign-in-refused', 'sign-in-throttled']

function plain(value: unknown): unknown {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('hex')}`
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Date) return value.toISOString()
  // pg returns BIGINT as text and SQLite as a number: compare as text.
  if (typeof value === 'number') return String(value)
  return value
}

/** Table name → its rows as sorted JSON lines. */
export type TableSnapshot = Record<string, string[]>

export async function snapshotTables(db: RawDatabase): Promise<TableSnapshot> {
  const names =
    db.dialect === 'sqlite'
      ? (
          await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        ).map((r) => r.name)
      : (
          await db.all<{ name: string }>(
            "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
          )
        ).map((r) => r.name)
  const out: TableSnapshot = {}
  for (const name of names) {
    if (SKIPPED_TABLES.has(name)) continue
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected table name ${name}`)
    const rows =
      name === 'ledger_records'
        ? await db.all(
            `SELECT * FROM ledger_records WHERE (entity_type IS NULL OR entity_type NOT IN (${CALL_RECORD_TYPES.map(() => '?').join(', ')})) AND (action_type IS NULL OR action_type NOT IN (${REFUSAL_ACTIONS.map(() => '?').join(', ')}))`,
            [...CALL_RECORD_TYPES, ...REFUSAL_ACTIONS],
          )
        : await db.all(`SELECT * FROM "${name}"`)
    const skipped = new Set(SKIPPED_COLUMNS[name] ?? [])
    out[name] = rows
      .map((row) =>
        JSON.stringify(
          Object.fromEntries(
            Object.entries(row)
              .filter(([k]) => !skipped.has(k))
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => [k, plain(v)]),
          ),
        ),
      )
      .sort()
  }
  return out
}

/** Human-readable differences (empty when equal): rows added and removed per table. */
export function snapshotDifferences(before: TableSnapshot, after: TableSnapshot): string[] {
  const out: string[] = []
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Set(before[table] ?? [])
    const now = new Set(after[table] ?? [])
    for (const row of now) if (!was.has(row)) out.push(`${table} + ${row.slice(0, 400)}`)
    for (const row of was) if (!now.has(row)) out.push(`${table} - ${row.slice(0, 400)}`)
  }
  return out
}
