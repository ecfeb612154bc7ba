/**
 * Issue 14, items 1-4: an attacker who writes the database directly must never get a record signed
 * by the server, and an auditor who kept a checkpoint (of a container or of the heads log) must see
 * truncation, rollback and deleted containers, through the API and offline (verify-export).
 * Each case alters the rows of a real database (SQLite and PostgreSQL), then makes one legitimate
 * call, and asserts what the server refuses and what verify says (docs/design/ledger.md §6).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { containerIdForScope } from '../../src/domain/ledger/digest.js'
import { isExportValid, verifyExport } from '../../src/domain/ledger/export-format.js'
import { type NoteVerifierKey, parseVerifierKey } from '../../src/domain/ledger/signed-note.js'
import { BACKENDS } from '../support/backends.js'
import { ledgerAttacker } from '../support/ledger-attacker.js'
import { openRawDatabase, type RawDatabase } from '../support/raw-database.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const R = (n: number): string => String(n).padStart(12, '0')

const SCOPES = ['forged-tip', 'rewrite', 'truncate', 'deleted', 'control'] as const
const UNCOVERED_500 = /chain head .*is not covered by a signed checkpoint.*run .*verify/i

for (const backend of BACKENDS) {
  describe(`${backend}: records the server did not write are never signed, and kept checkpoints catch truncation (issue 14)`, () => {
    let server: TestServer
    let db: RawDatabase
    let editor: string
    let auditor: string
    let key: NoteVerifierKey
    /** What the auditor kept before the tampering: each container's newest checkpoint, and the heads log's. */
    const kept = new Map<string, string>()
    let keptHeads = ''
    const ws = () => server.workspace.id
    const { rows, digestOf, fixHead, deleteAnchorsAbove, insertRecord } = ledgerAttacker(() => db, ws)

    before(async () => {
      server = await startTestServer(backend)
      editor = await server.token('editor')
      auditor = await server.token('analyst')
      for (const scope of SCOPES) {
        for (let n = 1; n <= 10; n++) {
          const r = await append(scope, n)
          assert.equal(r.status, 200, r.text)
        }
        const cp = await server.api('GET', `/oi-api/provenance/checkpoints/latest?scopeKey=${scope}`, { token: auditor })
        assert.equal(cp.body.size, 10)
        kept.set(scope, cp.body.checkpoint)
      }
      const heads = await server.api('GET', '/oi-api/provenance/checkpoints/latest?headsLog=true', { token: auditor })
      assert.equal(heads.status, 200, heads.text)
      keptHeads = heads.body.checkpoint
      key = parseVerifierKey(
        ((await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)).json()) as { verifierKey: string }).verifierKey,
      )
      db = await openRawDatabase(server)
    })
    after(async () => {
      await db?.close()
      await server.stop()
    })

    function append(scope: string, n: number) {
      return server.api('POST', '/oi-api/provenance/events', {
        token: editor,
        body: { ScopeKey: scope, entityType: 'batch', entityId: `B-${n}`, actionType: 'update', details: { n } },
      })
    }
    async function verify(scope: string, extra: Record<string, unknown> = {}) {
      const r = await server.api('POST', '/oi-api/provenance/events/verify', { token: auditor, body: { ScopeKey: scope, ...extra } })
      assert.equal(r.status, 200, r.text)
      return r.body as {
        Valid: boolean | null
        ChainValid: boolean
        Empty: boolean
        BrokenAt: string | null
        ForkDetected: boolean
        Reason: string
      }
    }
    async function alarms(): Promise<string[]> {
      const r = await server.api('GET', '/oi-api/provenance/events/query?entityType=ledger-integrity-alarm&limit=100', { token: auditor })
      assert.equal(r.status, 200, r.text)
      return (r.body.results as { entityId: string }[]).map((e) => e.entityId)
    }
    async function exportOf(scope: string): Promise<string> {
      const r = await server.api('GET', `/oi-api/provenance/events/export?scopeKey=${scope}&format=json`, { token: auditor })
      assert.equal(r.status, 200, r.text)
      return r.text
    }

    it('untampered: an export verifies offline with the kept checkpoint, and says every record is covered', async () => {
      const checked = await verifyExport([await exportOf('control')], { trustedKeys: [key], trustedCheckpoint: kept.get('control')! })
      assert.ok(isExportValid(checked), checked.result.kind === 'verdict' ? checked.result.verdict.Reason : checked.result.message)
      const v = await verify('control', { TrustedCheckpoint: kept.get('control') })
      assert.deepEqual([v.ChainValid, v.BrokenAt], [true, null], v.Reason)
      assert.match(v.Reason, /^OK: .*all records are covered by a signed checkpoint \(size 1[01]\)$/)
    })

    it('a forged tip record (valid link, head fixed), then one legitimate append: the append is refused, verify reports the record', async () => {
      const scope = 'forged-tip'
      const ten = (await rows(scope)).at(-1)!
      const forged = {
        record_id: R(11),
        prev_digest: ten.digest,
        ts: ten.ts,
        user_id: ten.user_id,
        body: ten.body.replace('B-10', 'B-FORGED'),
      }
      await insertRecord(scope, 11, forged)
      await fixHead(scope)
      const before = await verify(scope)
      assert.deepEqual([before.ChainValid, before.BrokenAt], [false, R(11)], before.Reason)
      assert.match(before.Reason, /^UNCOVERED: /)

      const r = await append(scope, 12)
      assert.equal(r.status, 500, r.text)
      assert.match(errorMessage(r), UNCOVERED_500)
      assert.equal((await rows(scope)).length, 11, 'nothing was appended to the tampered chain')
      const v = await verify(scope)
      assert.deepEqual([v.ChainValid, v.BrokenAt, v.ForkDetected], [false, R(11), false], v.Reason)
      assert.match(v.Reason, /^UNCOVERED: record 000000000011 is not covered by any checkpoint this server signed/)
      assert.doesNotMatch(v.Reason, /all records are covered/)
      assert.ok((await alarms()).includes(containerIdForScope(scope)), 'an alarm record names the container')
      assert.ok(
        server.logLines.some((l) => l.includes('not covered by a signed checkpoint') && l.includes(containerIdForScope(scope))),
        'the refusal is logged',
      )
      // Other scopes keep working.
      assert.equal((await append('control', 11)).status, 200)
    })

    it('a consistent rewrite after deleting the checkpoints and heads-log entries, then one append: refused, and verify reports it', async () => {
      const scope = 'rewrite'
      let prev: Buffer | null = null
      for (const r of await rows(scope)) {
        const next = { ...r, body: r.seq === 1 ? r.body.replace('"n":1', '"n":100') : r.body, prev_digest: prev ?? r.prev_digest }
        const digest = digestOf(scope, next)
        await db.run('UPDATE ledger_records SET body = ?, prev_digest = ?, digest = ? WHERE id = ?', [
          next.body,
          next.prev_digest,
          digest,
          r.id,
        ])
        prev = digest
      }
      await fixHead(scope)
      await deleteAnchorsAbove(scope, 0)
      const r = await append(scope, 11)
      assert.equal(r.status, 500, r.text)
      assert.match(errorMessage(r), UNCOVERED_500)
      const v = await verify(scope)
      assert.deepEqual([v.ChainValid, v.BrokenAt], [false, R(1)], v.Reason)
      assert.match(v.Reason, /^UNCOVERED: records 000000000001 to 000000000010 are not covered by any checkpoint this server signed/)
      assert.ok((await alarms()).includes(containerIdForScope(scope)))
      const withKept = await verify(scope, { TrustedCheckpoint: kept.get(scope) })
      assert.deepEqual([withKept.ChainValid, withKept.BrokenAt, withKept.ForkDetected], [false, R(1), true], withKept.Reason)
    })

    it('tail truncation with the head fixed (and the newer anchors deleted): API verify and verify-export with the kept checkpoint both fail', async () => {
      const scope = 'truncate'
      for (const seq of [8, 9, 10])
        await db.run('DELETE FROM ledger_records WHERE workspace_id = ? AND container_id = ? AND seq = ?', [
          ws(),
          containerIdForScope(scope),
          seq,
        ])
      await fixHead(scope)
      await deleteAnchorsAbove(scope, 7)
      const v = await verify(scope, { TrustedCheckpoint: kept.get(scope) })
      assert.deepEqual([v.ChainValid, v.BrokenAt], [false, R(8)], v.Reason)
      assert.match(v.Reason, /^TRUNCATED: /)
      assert.doesNotMatch(v.Reason, /all records are covered/)

      const file = await exportOf(scope)
      const checked = await verifyExport([file], { trustedKeys: [key], trustedCheckpoint: kept.get(scope)! })
      assert.equal(isExportValid(checked), false, 'verify-export must fail')
      assert.ok(checked.result.kind === 'verdict')
      assert.deepEqual([checked.result.verdict.ChainValid, checked.result.verdict.BrokenAt], [false, R(8)], checked.result.verdict.Reason)
      assert.match(checked.result.verdict.Reason, /^TRUNCATED: .*000000000010.*trusted checkpoint/)
      assert.doesNotMatch(checked.result.verdict.Reason, /all records are covered/)
    })

    it('a whole container deleted with its heads-log entries: verify with the kept heads-log checkpoint fails, never Empty', async () => {
      const scope = 'deleted'
      const container = containerIdForScope(scope)
      await deleteAnchorsAbove(scope, 0)
      await db.run('DELETE FROM ledger_records WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      await db.run('DELETE FROM ledger_heads WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      await db.run('DELETE FROM ledger_nodes WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      const plain = await verify(scope)
      assert.equal(plain.Empty, true, 'from the store alone the container looks never written (documented)')
      const v = await verify(scope, { TrustedCheckpoint: keptHeads })
      assert.deepEqual([v.ChainValid, v.Empty, v.BrokenAt], [false, false, R(1)], v.Reason)
      assert.match(v.Reason, /heads log/)
      const five = await server.api('POST', '/oi-api/provenance/events/verify', {
        token: auditor,
        body: { ScopeKey: scope, RecordID: R(5), TrustedCheckpoint: keptHeads },
      })
      assert.equal(five.status, 200, five.text)
      assert.equal(five.body.Valid, false)
    })

    it('a heads-log checkpoint of another workspace or a forged one is still a 400', async () => {
      const forged = keptHeads.replace(/\n\d+\n/, '\n999\n')
      const r = await server.api('POST', '/oi-api/provenance/events/verify', {
        token: auditor,
        body: { ScopeKey: 'control', TrustedCheckpoint: forged },
      })
      assert.equal(r.status, 400, r.text)
    })

    // Last: a failed heads log stops every append of the workspace (documented), calls included.
    it('the heads log extended past its newest checkpoint (its newest checkpoints deleted): every append of the workspace fails closed with a 500 naming the heads log', async () => {
      const newest = await db.all<{ size: number }>(
        "SELECT MAX(size) AS size FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = 'heads'",
        [ws()],
      )
      await db.run("DELETE FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = 'heads' AND size = ?", [ws(), newest[0]!.size])
      const r = await append('control', 12)
      assert.equal(r.status, 500, r.text)
      assert.match(errorMessage(r), /the chain head of the workspace heads log is not covered by a signed checkpoint/)
      const v = await server.services.ledger.verify({ container: { workspaceId: ws(), containerId: 'heads' } })
      assert.ok(v.kind === 'verdict')
      assert.equal(v.verdict.ChainValid, false, v.verdict.Reason)
      // (The heads log also has gaps from the deleted container above; the uncovered tail is among the findings.)
      assert.ok(
        v.facts.findings.some((f) => f.code === 'UNCOVERED'),
        v.verdict.Reason,
      )
    })
  })
}
