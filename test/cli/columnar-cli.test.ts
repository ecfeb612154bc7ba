/**
 * `provenant columnar status|segments|compact|check` beside a running server, per backend (issue 16).
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess } from '../support/cli.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: provenant columnar`, () => {
    let server: TestServer
    let store: string[]
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(30))
      store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
    })
    after(() => server.stop())

    it('compact moves the rows into segments; status and segments show them; check finds what is wrong', async () => {
      const before = await runCliInProcess(['columnar', 'status', '--json', ...store])
      assert.equal(before.code, 0, before.stderr)
      const sensors = (s: string) =>
        (JSON.parse(s) as { lookup: string; tailRows: number; compactedRows: number }[]).find((p) => p.lookup === 'sensors')!
      assert.deepEqual([sensors(before.stdout).tailRows, sensors(before.stdout).compactedRows], [30, 0])

      const compact = await runCliInProcess(['columnar', 'compact', ...store])
      assert.equal(compact.code, 0, compact.stderr)
      assert.match(compact.stdout, /compacted 30 rows/)
      const status = await runCliInProcess(['columnar', 'status', '--json', ...store])
      assert.deepEqual([sensors(status.stdout).tailRows, sensors(status.stdout).compactedRows], [0, 30])

      const segments = await runCliInProcess(['columnar', 'segments', ...store])
      assert.match(segments.stdout, /\.parquet\s+30\s+1-30/)
      const clean = await runCliInProcess(['columnar', 'check', ...store])
      assert.equal(clean.code, 0, clean.stdout)
      assert.match(clean.stdout, /orphans: none/)

      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'sensors')!
      writeFileSync(join(server.config.dataDir, 'segments', table.sqlName, 'left-by-a-crash.parquet'), 'x')
      const dirty = await runCliInProcess(['columnar', 'check', ...store])
      assert.match(dirty.stdout, /orphans: .*left-by-a-crash\.parquet/)
      const usage = await runCliInProcess(['columnar', 'frob', ...store])
      assert.equal(usage.code, 2)
    })
  })
}
