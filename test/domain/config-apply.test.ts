/**
 * Design §4: configuration as code. A document is validated whole, applied as one commit with its
 * physical tables, refused whole when any part is wrong, and kept in the commit history.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ConfigActor } from '../../src/domain/workspace-config/config-service.js'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const sensors = (extraColumns: object[] = []) => ({
  lookup: 'sensors',
  kind: 'push',
  table: 'Sensors',
  columns: [{ name: 'timestamp', type: 'datetime' }, { name: 'value', type: 'real' }, ...extraColumns],
})

const query = (lookup: string, text: string, path?: string) => ({ lookup, query: text, ...(path ? { path } : {}) })

for (const backend of BACKENDS) {
  describe(`${backend}: configuration as code (design §4)`, () => {
    let server: TestServer
    let admin: ConfigActor
    let editor: ConfigActor
    before(async () => {
      server = await startTestServer(backend)
      admin = { accountId: server.accounts.admin.id, accountName: server.accounts.admin.name, role: 'admin' }
      editor = { accountId: server.accounts.editor.id, accountName: server.accounts.editor.name, role: 'editor' }
    })
    after(() => server.stop())

    const ws = () => server.workspace.id
    const tables = async () => (await server.stores.config.connectionTables(ws())).map((t) => t.lookup)

    it('applies a document as commit #1 with its tables, approvals by the applier, and defaults', async () => {
      const result = await server.services.config.apply(ws(), admin, {
        connections: [sensors()],
        surfaces: [{ lookup: 'hall', connections: ['sensors'] }],
        warmQueries: [query('avg', 'Sensors | summarize avg(value)', 'plant/avg')],
      })
      assert.equal(result.commit?.seq, 1)
      assert.deepEqual(
        result.changes.map((c) => `${c.action} ${c.entity} ${c.id}`),
        ['added connection sensors', 'added surface hall', 'added warmQuery avg'],
      )
      assert.deepEqual(await tables(), ['sensors'])
      const current = await server.services.config.current(ws())
      assert.equal(current.approvals['avg']?.accountName, admin.accountName)
      assert.deepEqual(
        current.document.reasonCategories.map((r) => r.id),
        ['data-entry-error', 'transcription-error', 'recalculation', 'delayed-entry', 'instrument-fault', 'other'],
      )
      assert.equal(current.document.settings.queries.rowCap, 10_000)
    })

    it('re-applying the same document changes nothing and records no commit', async () => {
      const document = {
        connections: [sensors()],
        surfaces: [{ lookup: 'hall', connections: ['sensors'] }],
        warmQueries: [query('avg', 'Sensors | summarize avg(value)', 'plant/avg')],
      }
      const result = await server.services.config.apply(ws(), admin, document)
      assert.equal(result.commit, undefined)
      assert.deepEqual(result.changes, [])
      assert.equal((await server.services.config.history(ws())).length, 1)
    })

    it('refuses an invalid document with every problem and its path, and changes nothing', async () => {
      const before = await server.services.config.history(ws())
      await assert.rejects(
        server.services.config.apply(ws(), admin, {
          connections: [
            { lookup: 'bad lookup', kind: 'push', table: 'T1', columns: [{ name: 'timestamp', type: 'datetime' }] },
            { lookup: 'no-ts', kind: 'push', table: 'T2', columns: [{ name: 'value', type: 'reel' }] },
          ],
          surfaces: [{ lookup: 's', connections: ['missing'] }],
        }),
        (error: Error) => {
          assert.match(error.message, /connections\[0\]\.lookup: a lookup is/)
          assert.match(error.message, /connections\[1\]\.columns\[0\]\.type: unknown type "reel"/)
          return true
        },
      )
      await assert.rejects(
        server.services.config.apply(ws(), admin, {
          connections: [{ lookup: 'no-ts', kind: 'push', table: 'T2', columns: [{ name: 'value', type: 'real' }] }],
          surfaces: [{ lookup: 's', connections: ['missing'] }],
        }),
        (error: Error) =>
          /a connection needs a column named "timestamp"/.test(error.message) &&
          /surfaces\[0\]\.connections\[0\]: no connection has the lookup "missing"/.test(error.message),
      )
      assert.equal((await server.services.config.history(ws())).length, before.length)
      assert.deepEqual(await tables(), ['sensors'])
    })

    it('adds columns in place and refuses changes that would lose stored rows, whole', async () => {
      await server.services.config.apply(ws(), admin, {
        connections: [sensors([{ name: 'unit', type: 'string' }])],
        surfaces: [{ lookup: 'hall', connections: ['sensors'] }],
        warmQueries: [query('avg', 'Sensors | summarize avg(value)', 'plant/avg')],
      })
      const table = (await server.stores.config.connectionTables(ws()))[0]!
      assert.deepEqual(
        table.columns.map((c) => c.name),
        ['timestamp', 'value', 'unit'],
      )
      await server.services.ingest.importRows(ws(), 'sensors', [{ timestamp: '2026-01-01T00:00:00Z', value: 1.5, unit: 'C' }])
      const history = (await server.services.config.history(ws())).length
      await assert.rejects(
        server.services.config.apply(ws(), admin, {
          connections: [
            sensors(),
            { lookup: 'new-one', kind: 'push', table: 'NewOne', columns: [{ name: 'timestamp', type: 'datetime' }] },
          ],
        }),
        /connection sensors has 1 stored rows; refusing to remove column unit/,
      )
      await assert.rejects(
        server.services.config.apply(ws(), admin, { connections: [] }),
        /removing connection sensors would delete its 1 stored rows/,
      )
      assert.deepEqual(await tables(), ['sensors'], 'the new connection of the refused document was not created')
      assert.equal((await server.services.config.history(ws())).length, history)
    })

    it('keeps approvals of unchanged warm queries and re-approves changed ones; editors cannot change them', async () => {
      const base = { connections: [sensors([{ name: 'unit', type: 'string' }])], surfaces: [{ lookup: 'hall', connections: ['sensors'] }] }
      await assert.rejects(
        server.services.config.apply(ws(), editor, { ...base, warmQueries: [query('avg', 'Sensors | summarize max(value)', 'plant/avg')] }),
        /the editor role cannot approve/,
      )
      const approver: ConfigActor = { accountId: server.accounts.approver.id, accountName: server.accounts.approver.name, role: 'approver' }
      const result = await server.services.config.apply(ws(), approver, {
        ...base,
        warmQueries: [query('avg', 'Sensors | summarize avg(value)', 'plant/avg'), query('max', 'Sensors | summarize max(value)')],
      })
      assert.deepEqual(
        result.changes.map((c) => `${c.action} ${c.id}`),
        ['added max'],
      )
      assert.equal(result.commit!.approvals['avg']!.accountName, admin.accountName, 'unchanged query keeps its approver')
      assert.equal(result.commit!.approvals['max']!.accountName, approver.accountName)
      // Editors may apply documents whose warm queries they leave alone.
      const edited = await server.services.config.apply(ws(), editor, {
        ...base,
        warmQueries: [query('avg', 'Sensors | summarize avg(value)', 'plant/avg'), query('max', 'Sensors | summarize max(value)')],
        reasonCategories: ['other'],
      })
      assert.deepEqual(edited.changes.map((c) => `${c.action} ${c.entity} ${c.id}`).sort(), [
        'changed reasonCategory other',
        'removed reasonCategory data-entry-error',
        'removed reasonCategory delayed-entry',
        'removed reasonCategory instrument-fault',
        'removed reasonCategory recalculation',
        'removed reasonCategory transcription-error',
      ])
      await assert.rejects(
        server.services.config.apply(ws(), { ...editor, role: 'viewer' }, base),
        /the viewer role cannot apply configuration/,
      )
    })

    it('refuses warm query addresses that clash', async () => {
      await assert.rejects(
        server.services.config.apply(ws(), admin, { warmQueries: [query('a', 'print 1', 'beta'), query('beta', 'print 2')] }),
        /warmQueries\[1\]\.lookup: "beta" already addresses warmQueries\[0\]/,
      )
      await assert.rejects(
        server.services.config.apply(ws(), admin, { warmQueries: [query('a', 'print 1', 'p/q'), query('b', 'print 2', 'p/q')] }),
        /warmQueries\[1\]\.path: "p\/q" already addresses warmQueries\[0\]/,
      )
    })

    it('serialises concurrent applies: each becomes its own commit, none fails', async () => {
      const before = (await server.services.config.history(ws())).length
      const base = (await server.services.config.current(ws())).document
      const results = await Promise.all(
        ['one', 'two', 'three'].map((id) =>
          server.services.config.apply(ws(), admin, { ...base, reasonCategories: [...base.reasonCategories, { id: `concurrent-${id}` }] }),
        ),
      )
      assert.equal(results.filter((r) => r.commit).length, 3)
      const history = await server.services.config.history(ws())
      assert.equal(history.length, before + 3)
      assert.deepEqual(
        history.slice(0, 3).map((c) => c.seq),
        [before + 3, before + 2, before + 1],
      )
    })

    it('keeps the commit history newest first with author, parent, message and changes', async () => {
      const history = await server.services.config.history(ws())
      assert.deepEqual(
        history.map((c) => c.seq),
        [...history.map((c) => c.seq)].sort((a, b) => b - a),
      )
      for (let i = 0; i < history.length - 1; i++) assert.equal(history[i]!.parentId, history[i + 1]!.id)
      assert.equal(history.at(-1)!.parentId, undefined)
      assert.ok(history.every((c) => c.message.length > 0 && c.changes.length > 0 && c.authorName))
      const changes = await server.stores.changes.since(ws(), 0, 100)
      assert.deepEqual(
        changes.filter((c) => c.kind === 'config').map((c) => c.commitId),
        [...history].reverse().map((c) => c.id),
      )
    })
  })
}
