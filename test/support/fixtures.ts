/**
 * @module
 * Shared fixtures: a small sensor workspace configuration and helpers to apply it and push rows.
 */
import assert from 'node:assert/strict'
import { parse } from 'lossless-json'
import type { TestServer } from './test-server.js'

export const SENSOR_COLUMNS = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'sensor', type: 'string' },
  { name: 'value', type: 'real' },
] as const

export function sensorConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    connections: [
      { lookup: 'sensors', kind: 'push', table: 'Sensors', columns: SENSOR_COLUMNS },
      {
        lookup: 'meters',
        kind: 'push',
        table: 'Meters',
        columns: [
          { name: 'timestamp', type: 'datetime' },
          { name: 'kwh', type: 'real' },
        ],
      },
    ],
    surfaces: [
      { lookup: 'hall', connections: ['sensors'] },
      { lookup: 'yard', connections: ['meters'] },
    ],
    warmQueries: [
      {
        lookup: 'avg-by-sensor',
        path: 'plant/hall/avg',
        description: 'Average per sensor',
        query: 'Sensors | summarize avg_value = avg(value) by sensor | order by sensor asc',
      },
      { lookup: 'no-text', description: 'A warm query whose text was never saved' },
    ],
    ...extra,
  }
}

export async function applyAsAdmin(server: TestServer, document: unknown): Promise<void> {
  const admin = server.accounts.admin
  await server.services.config.apply(server.workspace.id, { accountId: admin.id, accountName: admin.name, role: 'admin' }, document)
}

/** Pushes rows through the real ingest service. */
export async function pushRows(server: TestServer, lookup: string, rows: Record<string, unknown>[]): Promise<void> {
  const { result, problems } = await server.services.ingest.importRows(server.workspace.id, lookup, rows)
  if (problems.length || !result) throw new Error(`fixture rows refused: ${JSON.stringify(problems)}`)
}

export function sensorRows(count: number, start = Date.parse('2026-01-01T00:00:00Z')): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({ timestamp: new Date(start + i * 60_000).toISOString(), sensor: `s${i % 3}`, value: i }))
}

/** A configuration with one push connection (the value suites' single table). */
export function pushConnectionConfig(
  lookup: string,
  table: string,
  columns: readonly { name: string; type: string }[],
): Record<string, unknown> {
  return { connections: [{ lookup, kind: 'push', table, columns }] }
}

/** JSON with integers beyond 2^53 as bigints: what a lossless client sees (JSON.parse would round them). */
export function parseExactJson(text: string): unknown {
  return parse(text, undefined, (s: string) => {
    const n = Number(s)
    return /^-?\d+$/.test(s) && !Number.isSafeInteger(n) ? BigInt(s) : n
  })
}

/** Runs an ad-hoc query as `token` and returns its rows; `exact` reads them with {@link parseExactJson}. */
export async function queryRows(
  server: TestServer,
  token: string,
  query: string,
  options: { exact?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const response = await server.api('POST', '/oi-api/warm-queries', { token, body: { Query: query } })
  assert.equal(response.status, 200, response.text)
  const body = (options.exact ? parseExactJson(response.text) : response.body) as { results: Record<string, unknown>[] }
  return body.results
}
