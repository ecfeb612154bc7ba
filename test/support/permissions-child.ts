/**
 * @module
 * Child process of test/security/file-permissions.test.ts, started under `umask 000`: starts a
 * real server on a data directory that does not exist yet (argv[2]; backend argv[3]), writes rows,
 * an activity-log record (every call is one) and an export file, then prints the mode of every file and
 * directory (named with a trailing /) under the data directory as JSON on stdout — while the server is still open, so the
 * SQLite -wal and -shm files are there — and stops.
 */
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Backend } from './backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from './fixtures.js'
import { startTestServer } from './test-server.js'

const [dataDir, backend] = process.argv.slice(2) as [string, Backend]

function modes(dir: string, out: Record<string, string>): Record<string, string> {
  out[`${relative(dataDir, dir) || '.'}/`] = (statSync(dir).mode & 0o777).toString(8)
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) modes(path, out)
    else out[relative(dataDir, path)] = (statSync(path).mode & 0o777).toString(8)
  }
  return out
}

const server = await startTestServer(backend, { dataDir })
try {
  await applyAsAdmin(server, sensorConfig())
  await pushRows(server, 'sensors', sensorRows(5))
  const analyst = await server.token('analyst')
  const exported = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
    token: analyst,
    body: { format: 'csv', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
  })
  if (exported.status !== 200) throw new Error(`export refused: ${exported.text}`)
  process.stdout.write(`${JSON.stringify({ umask: process.umask().toString(8), modes: modes(dataDir, {}) })}\n`)
} finally {
  await server.stop()
}
