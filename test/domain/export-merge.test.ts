/**
 * The export's merge of a surface's connections (design §5: timestamp, then row id) across read
 * chunks, pages and connections, on real stores of every backend: any chunk size gives the same
 * file, and the pages of the capped set partition it in order.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openExportStorage } from '../../src/adapters/export-files/open-export-storage.js'
import type { Caller } from '../../src/domain/access/caller.js'
import { createExportService } from '../../src/domain/exports/export-service.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const columns = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'seq', type: 'long' },
]
const CONFIG = {
  connections: ['a', 'b', 'c'].map((lookup) => ({ lookup, kind: 'push', table: lookup.toUpperCase(), columns })),
  surfaces: [{ lookup: 's', connections: ['c', 'a', 'b'] }],
}
const BASE = Date.parse('2026-01-01T00:00:00Z')

for (const backend of BACKENDS) {
  describe(`${backend}: merging a surface's connections across chunks and pages`, () => {
    let server: TestServer
    let caller: Caller
    const expected: { connection: string; seq: number; second: number }[] = []

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, CONFIG)
      // 8 batches round-robin over the connections: row ids interleave across them, and only 20
      // distinct timestamps make ties (broken by row id = insertion order = seq) everywhere.
      let seed = 7
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
        return seed / 2 ** 31
      }
      let seq = 0
      for (let batch = 0; batch < 8; batch++) {
        const connection = ['a', 'b', 'c'][batch % 3]!
        const rows = Array.from({ length: 10 + Math.floor(random() * 10) }, () => {
          const second = Math.floor(random() * 20)
          expected.push({ connection, seq, second })
          return { timestamp: new Date(BASE + second * 1000).toISOString(), seq: seq++ }
        })
        await pushRows(server, connection, rows)
      }
      expected.sort((x, y) => x.second - y.second || x.seq - y.seq)
      caller = await server.services.access.authenticate(`Bearer ${await server.token('analyst')}`)
    })
    after(() => server.stop())

    async function exportLines(chunkRows: number, page: number, pageSize: number): Promise<{ connection: string; seq: number }[]> {
      const service = createExportService({
        stores: server.stores,
        config: server.services.config,
        ...openExportStorage(server.config, server.services.clock),
        activity: server.services.activity,
        clock: server.services.clock,
        chunkRows,
      })
      const result = await service.create(
        caller,
        { kind: 'surface', surface: 's' },
        { format: 'jsonl', from: BigInt(BASE) * 10_000n, to: BigInt(BASE + 20_000) * 10_000n, page, pageSize },
      )
      const file = join(server.config.exportDir, server.workspace.id, `${result.fileId}.jsonl`)
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const row = JSON.parse(line) as { connection: string; seq: number }
          return { connection: row.connection, seq: row.seq }
        })
    }

    it('any chunk size gives the whole window in (timestamp, row id) order', async () => {
      const want = expected.map(({ connection, seq }) => ({ connection, seq }))
      for (const chunkRows of [1, 2, 3, 7, 1000]) assert.deepEqual(await exportLines(chunkRows, 1, 5000), want, `chunkRows ${chunkRows}`)
    })

    it('pages partition the merged rows in order, whatever the chunk size', async () => {
      const want = expected.map(({ connection, seq }) => ({ connection, seq }))
      for (const [chunkRows, pageSize] of [
        [2, 7],
        [3, 10],
        [1000, 13],
        [4, 1],
      ] as const) {
        const got: { connection: string; seq: number }[] = []
        for (let page = 1; page <= Math.ceil(want.length / pageSize); page++) got.push(...(await exportLines(chunkRows, page, pageSize)))
        assert.deepEqual(got, want, `chunkRows ${chunkRows}, pageSize ${pageSize}`)
      }
    })
  })
}
