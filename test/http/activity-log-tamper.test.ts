/**
 * Tampering with stored history (issue 4, item 8): each case alters the rows of one container
 * directly in the database, the way someone with write access could, and asserts the exact verdict
 * of POST /oi-api/provenance/events/verify (spec 2.7): ChainValid, BrokenAt, ForkDetected, Empty,
 * the Reason's code, and Valid for RecordID 000000000005. The service signs a checkpoint after every
 * batch and records it in the heads log, so "naive" cases leave those copies in place; "thorough"
 * cases delete them too, and then only a checkpoint the auditor kept (TrustedCheckpoint) catches
 * the rollback or rewrite (docs/design/ledger.md §6).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { containerIdForScope } from '../../src/domain/ledger/digest.js'
import { BACKENDS } from '../support/backends.js'
import { type LedgerRow, ledgerAttacker } from '../support/ledger-attacker.js'
import { openRawDatabase, type RawDatabase } from '../support/raw-database.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const R = (n: number): string => String(n).padStart(12, '0')

type Row = LedgerRow

interface Expect {
  readonly ChainValid: boolean
  readonly BrokenAt: string | null
  readonly ForkDetected: boolean
  readonly Empty?: boolean
  readonly code: string
  readonly reason?: RegExp
  /** Valid for RecordID 000000000005, or 404. */
  readonly valid5: boolean | 404
}

const SCENARIOS = [
  'edit-details',
  'edit-actor',
  'edit-time',
  'edit-rehash',
  'delete-tip',
  'delete-middle',
  'insert',
  'swap-bodies',
  'swap-rows',
  'fork',
  'rollback',
  'rewrite',
  'delete-container',
  'legacy',
] as const

for (const backend of BACKENDS) {
  describe(`${backend}: tampering with stored history is detected, with the exact verdict`, () => {
    let server: TestServer
    let db: RawDatabase
    let editor: string
    let auditor: string
    /** The newest checkpoint of each container, kept outside the database before the tampering. */
    const kept = new Map<string, string>()
    const ws = () => server.workspace.id
    const { rows, digestOf, fixHead, deleteAnchorsAbove, insertRecord } = ledgerAttacker(() => db, ws)

    before(async () => {
      server = await startTestServer(backend)
      editor = await server.token('editor')
      auditor = await server.token('analyst')
      // Ten records per container, one request (so one batch and one checkpoint) each.
      await Promise.all(
        SCENARIOS.map(async (scope) => {
          for (let n = 1; n <= 10; n++) {
            const r = await server.api('POST', '/oi-api/provenance/events', {
              token: editor,
              body: { ScopeKey: scope, entityType: 'batch', entityId: `B-${n}`, actionType: 'update', details: { n } },
            })
            assert.equal(r.status, 200, r.text)
          }
          const cp = await server.api('GET', `/oi-api/provenance/checkpoints/latest?scopeKey=${scope}`, { token: auditor })
          assert.equal(cp.body.size, 10)
          kept.set(scope, cp.body.checkpoint)
        }),
      )
      db = await openRawDatabase(server)
    })
    after(async () => {
      await db?.close()
      await server.stop()
    })

    async function row(scope: string, seq: number): Promise<Row> {
      const r = (await rows(scope)).find((x) => x.seq === seq)
      assert.ok(r, `row ${seq} of ${scope}`)
      return r
    }
    async function setById(id: number, fields: Partial<Omit<Row, 'id'>>): Promise<void> {
      const keys = Object.keys(fields) as (keyof typeof fields)[]
      await db.run(`UPDATE ledger_records SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`, [...keys.map((k) => fields[k]), id])
    }
    async function deleteSeqs(scope: string, seqs: readonly number[]): Promise<void> {
      for (const seq of seqs)
        await db.run('DELETE FROM ledger_records WHERE workspace_id = ? AND container_id = ? AND seq = ?', [
          ws(),
          containerIdForScope(scope),
          seq,
        ])
    }
    async function verify(scope: string, extra: Record<string, unknown> = {}) {
      return server.api('POST', '/oi-api/provenance/events/verify', { token: auditor, body: { ScopeKey: scope, ...extra } })
    }
    async function expectVerdict(scope: string, want: Expect, extra: Record<string, unknown> = {}): Promise<void> {
      const r = await verify(scope, extra)
      assert.equal(r.status, 200, r.text)
      const v = r.body
      assert.deepEqual(
        { ChainValid: v.ChainValid, BrokenAt: v.BrokenAt, ForkDetected: v.ForkDetected, Empty: v.Empty, Valid: v.Valid },
        { ChainValid: want.ChainValid, BrokenAt: want.BrokenAt, ForkDetected: want.ForkDetected, Empty: want.Empty ?? false, Valid: null },
        v.Reason,
      )
      assert.ok(v.Reason.startsWith(`${want.code}:`), v.Reason)
      if (want.reason) assert.match(v.Reason, want.reason)
      const five = await verify(scope, { ...extra, RecordID: R(5) })
      if (want.valid5 === 404) {
        assert.equal(five.status, 404, five.text)
      } else {
        assert.equal(five.status, 200, five.text)
        assert.deepEqual(
          [five.body.Valid, five.body.ChainValid, five.body.BrokenAt],
          [want.valid5, want.ChainValid, want.BrokenAt],
          five.body.Reason,
        )
      }
    }

    it('untampered: every container verifies', async () => {
      await expectVerdict('edit-details', {
        ChainValid: true,
        BrokenAt: null,
        ForkDetected: false,
        code: 'OK',
        valid5: true,
        reason: /all records are covered by a signed checkpoint \(size 10\)$/,
      })
    })

    it('edit the details of a middle record → DIGEST_MISMATCH at 000000000005; Valid false', async () => {
      const r = await row('edit-details', 5)
      await setById(r.id, { body: r.body.replace('"n":5', '"n":500') })
      await expectVerdict('edit-details', {
        ChainValid: false,
        BrokenAt: R(5),
        ForkDetected: false,
        code: 'DIGEST_MISMATCH',
        valid5: false,
        reason: /^DIGEST_MISMATCH: record 000000000005 does not hash to its stored digest/,
      })
    })

    it('edit the actor (userId) of a middle record → DIGEST_MISMATCH at 000000000005', async () => {
      const r = await row('edit-actor', 5)
      await setById(r.id, { user_id: 'acc_mallory' })
      await expectVerdict('edit-actor', { ChainValid: false, BrokenAt: R(5), ForkDetected: false, code: 'DIGEST_MISMATCH', valid5: false })
    })

    it('edit the timestamp of a middle record → DIGEST_MISMATCH at 000000000005', async () => {
      const r = await row('edit-time', 5)
      await setById(r.id, { ts: '2020-01-01T00:00:00.000Z' })
      await expectVerdict('edit-time', { ChainValid: false, BrokenAt: R(5), ForkDetected: false, code: 'DIGEST_MISMATCH', valid5: false })
    })

    it('edit a record and recompute its own digest → Valid true, ChainValid false, LINK_MISMATCH at 000000000006', async () => {
      const r = await row('edit-rehash', 5)
      const edited = { ...r, body: r.body.replace('"n":5', '"n":500') }
      await setById(r.id, { body: edited.body, digest: digestOf('edit-rehash', edited) })
      await expectVerdict('edit-rehash', {
        ChainValid: false,
        BrokenAt: R(6),
        ForkDetected: false,
        code: 'LINK_MISMATCH',
        valid5: true,
        reason: /^LINK_MISMATCH: record 000000000006 does not link to record 000000000005/,
      })
    })

    it('delete the tip → TRUNCATED at 000000000010 (the head row still names it); RecordID 10 is Valid false, not 404', async () => {
      await deleteSeqs('delete-tip', [10])
      await expectVerdict('delete-tip', {
        ChainValid: false,
        BrokenAt: R(10),
        ForkDetected: false,
        code: 'TRUNCATED',
        valid5: true,
        reason: /^TRUNCATED: the store ends at 000000000009 but 000000000010 was attested by the head row/,
      })
      const ten = await verify('delete-tip', { RecordID: R(10) })
      assert.deepEqual([ten.status, ten.body.Valid], [200, false])
      assert.equal((await verify('delete-tip', { RecordID: R(11) })).status, 404)
    })

    it('delete a middle record → MISSING at 000000000005; Valid false', async () => {
      await deleteSeqs('delete-middle', [5])
      await expectVerdict('delete-middle', {
        ChainValid: false,
        BrokenAt: R(5),
        ForkDetected: false,
        code: 'MISSING',
        valid5: false,
        reason: /^MISSING: record 000000000005 is missing/,
      })
    })

    it('insert a forged record after #5 (constraints dropped, suffix renumbered, head fixed) → FORK_DUP_PREV at 000000000007', async () => {
      await db.dropConstraints()
      const scope = 'insert'
      for (const r of (await rows(scope)).reverse()) if (r.seq >= 6) await setById(r.id, { seq: r.seq + 1, record_id: R(r.seq + 1) })
      const five = await row(scope, 5)
      const forged = {
        record_id: R(6),
        prev_digest: five.digest,
        ts: five.ts,
        user_id: 'acc_mallory',
        body: five.body.replace('"n":5', '"n":6').replace('B-5', 'FORGED'),
      }
      await insertRecord(scope, 6, forged)
      await fixHead(scope)
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(7),
        ForkDetected: true,
        code: 'FORK_DUP_PREV',
        valid5: true,
        reason: /^FORK_DUP_PREV: records 000000000006 and 000000000007 both claim the same predecessor/,
      })
    })

    it('swap the bodies of two records → DIGEST_MISMATCH at 000000000004; Valid(5) false', async () => {
      const a = await row('swap-bodies', 4)
      const b = await row('swap-bodies', 5)
      await setById(a.id, { body: b.body })
      await setById(b.id, { body: a.body })
      await expectVerdict('swap-bodies', { ChainValid: false, BrokenAt: R(4), ForkDetected: false, code: 'DIGEST_MISMATCH', valid5: false })
    })

    it('swap two whole records (they trade RecordIDs) → DIGEST_MISMATCH at 000000000004', async () => {
      await db.dropConstraints()
      const a = await row('swap-rows', 4)
      const b = await row('swap-rows', 5)
      await setById(a.id, { seq: 5, record_id: R(5) })
      await setById(b.id, { seq: 4, record_id: R(4) })
      await expectVerdict('swap-rows', { ChainValid: false, BrokenAt: R(4), ForkDetected: false, code: 'DIGEST_MISMATCH', valid5: false })
    })

    it('duplicate a RecordID (a second branch from #6) → FORK_DUP_SEQ at 000000000007, ForkDetected', async () => {
      await db.dropConstraints()
      const scope = 'fork'
      const six = await row(scope, 6)
      const branch = {
        record_id: R(7),
        prev_digest: six.digest,
        ts: six.ts,
        user_id: 'acc_mallory',
        body: six.body.replace('B-6', 'BRANCH'),
      }
      await insertRecord(scope, 7, branch)
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(7),
        ForkDetected: true,
        code: 'FORK_DUP_SEQ',
        valid5: true,
        reason: /^FORK_DUP_SEQ: two records claim RecordID 000000000007/,
      })
    })

    it('roll back to #6 and rebuild a consistent shorter chain → TRUNCATED at 000000000007, from the stored copies, or only from a kept checkpoint', async () => {
      const scope = 'rollback'
      await deleteSeqs(scope, [7, 8, 9, 10])
      await fixHead(scope)
      // 1. The stored checkpoint and heads-log entries still say 10.
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(7),
        ForkDetected: false,
        code: 'TRUNCATED',
        valid5: true,
        reason: /^TRUNCATED: the store ends at 000000000006 but 000000000010 was attested by a stored checkpoint \(size 10\)/,
      })
      // 2. A thorough attacker removes them too: the store alone can no longer tell (documented)…
      await deleteAnchorsAbove(scope, 6)
      await expectVerdict(scope, { ChainValid: true, BrokenAt: null, ForkDetected: false, code: 'OK', valid5: true })
      // …but the checkpoint the auditor kept does.
      const trusted = { TrustedCheckpoint: kept.get(scope) }
      await expectVerdict(
        scope,
        {
          ChainValid: false,
          BrokenAt: R(7),
          ForkDetected: false,
          code: 'TRUNCATED',
          valid5: true,
          reason: /^TRUNCATED: the store ends at 000000000006 but 000000000010 was attested by the trusted checkpoint \(size 10\)/,
        },
        trusted,
      )
      const eight = await verify(scope, { ...trusted, RecordID: R(8) })
      assert.deepEqual([eight.status, eight.body.Valid], [200, false], 'inside the attested range: missing, not unknown')
      assert.equal((await verify(scope, { RecordID: R(8) })).status, 404, 'without the kept checkpoint, 8 is past the tip')
    })

    it('rewrite the whole chain consistently after a checkpoint → SPLIT_VIEW at 000000000001, ForkDetected', async () => {
      const scope = 'rewrite'
      let prev: Buffer | null = null
      for (const r of await rows(scope)) {
        const next = { ...r, body: r.seq === 1 ? r.body.replace('"n":1', '"n":100') : r.body, prev_digest: prev ?? r.prev_digest }
        const digest = digestOf(scope, next)
        await setById(r.id, { body: next.body, prev_digest: next.prev_digest, digest })
        prev = digest
      }
      await fixHead(scope)
      // 1. The heads log still holds the old roots.
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(1),
        ForkDetected: true,
        code: 'SPLIT_VIEW',
        valid5: true,
        reason:
          /^SPLIT_VIEW: records 000000000001 to 000000000001 no longer hash to the root recorded in the workspace heads log \(size 1\)/,
      })
      // 2. Thorough: every stored copy gone. The server signs every batch it commits, so records no
      // checkpoint covers were not written by it (issue 14); the kept checkpoint shows the split view.
      await deleteAnchorsAbove(scope, 0)
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(1),
        ForkDetected: false,
        code: 'UNCOVERED',
        valid5: true,
        reason: /^UNCOVERED: records 000000000001 to 000000000010 are not covered by any checkpoint this server signed/,
      })
      await expectVerdict(
        scope,
        {
          ChainValid: false,
          BrokenAt: R(1),
          ForkDetected: true,
          code: 'SPLIT_VIEW',
          valid5: true,
          reason:
            /^SPLIT_VIEW: records 000000000001 to 000000000010 no longer hash to the root signed in the trusted checkpoint \(size 10\)/,
        },
        { TrustedCheckpoint: kept.get(scope) },
      )
    })

    it('delete a whole container, head row and stored checkpoints included → not Empty: the heads log says it had 10 records', async () => {
      const scope = 'delete-container'
      const container = containerIdForScope(scope)
      await db.run('DELETE FROM ledger_records WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      await db.run('DELETE FROM ledger_heads WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      await db.run('DELETE FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = ?', [ws(), container])
      await expectVerdict(scope, {
        ChainValid: false,
        BrokenAt: R(1),
        ForkDetected: false,
        Empty: false,
        code: 'TRUNCATED',
        valid5: false,
        reason: /^TRUNCATED: no records are stored but 000000000010 was attested by the workspace heads log \(size 10\)/,
      })
    })

    it('the per-log shape gives the same verdict: isValid false with brokenAt', async () => {
      const r = await row('legacy', 3)
      await setById(r.id, { body: r.body.replace('"n":3', '"n":33') })
      const v = await server.api('POST', '/oi-api/audit-logs/legacy/events/verify', { token: auditor })
      assert.equal(v.status, 200)
      assert.deepEqual([v.body.isValid, v.body.recordCount, v.body.brokenAt], [false, 10, R(3)])
      assert.match(v.body.reason, /^DIGEST_MISMATCH: record 000000000003/)
    })

    it('a malformed RecordID is still a 400 on a tampered container, and an unknown one stays Empty', async () => {
      const r = await verify('edit-details', { RecordID: '5' })
      assert.equal(r.status, 400)
      assert.match(errorMessage(r), /RecordID must be exactly 12 digits/)
      const empty = await verify('never-written')
      assert.deepEqual([empty.body.Empty, empty.body.ChainValid], [true, true])
    })
  })
}
