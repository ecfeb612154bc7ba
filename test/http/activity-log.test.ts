/**
 * The activity log over real HTTP (issue 4; spec 2.6, 2.7, 3, 4.5, 4.7): append rules, query
 * filters and paging, verify (verdicts, RecordID rules, 404 past the tip, TrustedCheckpoint),
 * checkpoints and RFC 9162 proofs checked independently, streamed exports, the per-log shape, the
 * public verifier key, rights and scopes. Tampering is in activity-log-tamper.test.ts.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { openCheckpoint } from '../../src/domain/ledger/checkpoint.js'
import { verifyExport } from '../../src/domain/ledger/export-format.js'
import { verifyConsistency, verifyInclusion } from '../../src/domain/ledger/merkle.js'
import { parseVerifierKey } from '../../src/domain/ledger/signed-note.js'
import { BACKENDS } from '../support/backends.js'
import { MALFORMED_RECORD_IDS } from '../support/record-ids.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const R = (n: number): string => String(n).padStart(12, '0')

for (const backend of BACKENDS) {
  describe(`${backend}: activity log, current shape (spec 4.5)`, () => {
    let server: TestServer
    let editor: string
    let viewer: string
    let analyst: string
    const events = (scope: string, n: number, extra: Record<string, unknown> = {}) =>
      Array.from({ length: n }, (_, i) => ({
        ScopeKey: scope,
        entityType: 'batch',
        entityId: `B-${i + 1}`,
        actionType: i % 2 === 0 ? 'create' : 'release',
        details: { n: i + 1, ...extra },
      }))
    async function append(body: unknown, token = editor) {
      return server.api('POST', '/oi-api/provenance/events', { token, body })
    }
    before(async () => {
      server = await startTestServer(backend)
      editor = await server.token('editor')
      viewer = await server.token('viewer')
      analyst = await server.token('analyst')
    })
    after(() => server.stop())

    it('appends and returns the stored record: RecordID from 000000000001, server-set userId and timestamp, linked digests', async () => {
      const before = Date.now()
      const first = await append({
        ScopeKey: 'line-1',
        entityType: 'batch',
        entityId: 'B-1',
        actionType: 'create',
        details: { qty: 12, unit: 'kg' },
      })
      assert.equal(first.status, 200, first.text)
      assert.deepEqual(Object.keys(first.body), [
        'RecordID',
        'ScopeKey',
        'entityType',
        'entityId',
        'actionType',
        'userId',
        'timestamp',
        'details',
        'previousDigest',
        'digest',
      ])
      assert.equal(first.body.RecordID, R(1))
      assert.equal(first.body.userId, server.accounts.editor.id)
      assert.ok(Date.parse(first.body.timestamp) >= before - 5 && Date.parse(first.body.timestamp) <= Date.now() + 5)
      assert.match(first.body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.deepEqual(first.body.details, { qty: 12, unit: 'kg' })
      assert.match(first.body.digest, /^[0-9a-f]{64}$/)
      const second = await append({ scopekey: 'line-1', details: { note: 'case-insensitive names' } })
      assert.equal(second.status, 200, second.text)
      assert.deepEqual(
        [second.body.RecordID, second.body.previousDigest, second.body.entityType, second.body.actionType],
        [R(2), first.body.digest, null, null],
      )
      assert.ok(second.body.timestamp >= first.body.timestamp)
      const other = await append({ ScopeKey: 'line-2' })
      assert.deepEqual([other.body.RecordID, other.body.details], [R(1), {}], 'each ScopeKey is its own chain')
    })

    it('concurrent appends to one scope get gap-free RecordIDs in one valid chain', async () => {
      const responses = await Promise.all(events('burst', 40).map((e) => append(e)))
      assert.ok(responses.every((r) => r.status === 200))
      assert.deepEqual(
        responses.map((r) => r.body.RecordID).sort(),
        Array.from({ length: 40 }, (_, i) => R(i + 1)),
      )
      const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token: analyst, body: { ScopeKey: 'burst' } })
      assert.deepEqual(verdict.body, {
        Valid: null,
        ChainValid: true,
        Empty: false,
        BrokenAt: null,
        ForkDetected: false,
        Reason: 'OK: 40 records verified (000000000001 to 000000000040); all records are covered by a signed checkpoint (size 40)',
      })
    })

    it('refuses a body without ScopeKey, or one that sets the user, actor, timestamp, RecordID or a digest (400)', async () => {
      const cases: [unknown, RegExp][] = [
        [{ entityType: 'batch' }, /ScopeKey/],
        [{ ScopeKey: '' }, /ScopeKey must not be empty/],
        [{ ScopeKey: 'a', userId: 'acc_x' }, /"userId" cannot be sent: userId is set by the server/],
        [{ ScopeKey: 'a', UserID: 'acc_x' }, /"UserID" cannot be sent/],
        [{ ScopeKey: 'a', actor: 'mallory' }, /"actor" cannot be sent: the actor is set by the server/],
        [{ ScopeKey: 'a', timestamp: '2026-01-01T00:00:00Z' }, /"timestamp" cannot be sent: the timestamp is set by the server/],
        [{ ScopeKey: 'a', RecordID: '000000000009' }, /"RecordID" cannot be sent: the RecordID is assigned/],
        [{ ScopeKey: 'a', digest: 'ab' }, /"digest" cannot be sent: digests are computed/],
        [{ ScopeKey: 'a', previousDigest: 'ab' }, /"previousDigest" cannot be sent/],
        [{ ScopeKey: 'a', colour: 'red' }, /unknown field "colour"; an event has ScopeKey, entityType, entityId, actionType, details/],
        [{ ScopeKey: 'a', details: [1, 2] }, /details must be a JSON object/],
        [{ ScopeKey: 'a', entityType: 42 }, /entityType must be a string/],
        [{ ScopeKey: 'a', entityType: 'a\u0000b' }, /NUL character/],
        [{ ScopeKey: 42 }, /ScopeKey/],
        [[{ ScopeKey: 'a' }], /body/],
      ]
      for (const [body, message] of cases) {
        const r = await append(body)
        assert.equal(r.status, 400, JSON.stringify(body))
        assert.match(errorMessage(r), message, JSON.stringify(body))
      }
      const dup = await server.api('POST', '/oi-api/provenance/events', { token: editor, rawBody: '{"ScopeKey":"a","ScopeKey":"b"}' })
      assert.equal(dup.status, 400)
      assert.match(errorMessage(dup), /duplicate key "ScopeKey"/)
      const inexact = await server.api('POST', '/oi-api/provenance/events', {
        token: editor,
        rawBody: '{"ScopeKey":"a","details":{"id":9007199254740993}}',
      })
      assert.equal(inexact.status, 400)
      const nothing = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=a', { token: viewer })
      assert.equal(nothing.body.totalCount, 0, 'nothing was appended by a refused body')
    })

    it("403 without the rights (append needs provenance:append, verify provenance:verify) or outside the token's scope keys", async () => {
      const noAppend = await append({ ScopeKey: 'line-1' }, analyst)
      assert.equal(noAppend.status, 403)
      assert.match(errorMessage(noAppend), /provenance:append/)
      const noVerify = await server.api('POST', '/oi-api/provenance/events/verify', { token: viewer, body: { ScopeKey: 'line-1' } })
      assert.equal(noVerify.status, 403)
      const scoped = await server.token('editor', { scopes: { scopeKeys: ['line-2'] } })
      const outside = await append({ ScopeKey: 'line-1' }, scoped)
      assert.equal(outside.status, 403)
      assert.match(errorMessage(outside), /limited to other scope keys than "line-1"/)
      assert.equal((await append({ ScopeKey: 'line-2' }, scoped)).status, 200)
      const platform = await server.api('GET', '/oi-api/provenance/events/query', { token: scoped })
      assert.equal(platform.status, 403)
      assert.match(errorMessage(platform), /Platform-Config records need a token without a scope-key limit/)
    })

    describe('query', () => {
      before(async () => {
        for (const e of events('q', 12)) assert.equal((await append(e)).status, 200)
        const other = await server.token('approver')
        assert.equal((await append({ ScopeKey: 'q', entityType: 'lot', entityId: 'L-1', actionType: 'hold' }, other)).status, 200)
      })

      it('newest first by default with a total count; oldest first with order=asc; limit and offset page', async () => {
        const r = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&limit=5', { token: viewer })
        assert.equal(r.status, 200, r.text)
        assert.deepEqual([r.body.ScopeKey, r.body.totalCount, r.body.limit, r.body.offset, r.body.order], ['q', 13, 5, 0, 'desc'])
        assert.deepEqual(
          r.body.results.map((e: { RecordID: string }) => e.RecordID),
          [R(13), R(12), R(11), R(10), R(9)],
        )
        const page = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&limit=5&offset=10&order=asc', { token: viewer })
        assert.deepEqual(
          page.body.results.map((e: { RecordID: string }) => e.RecordID),
          [R(11), R(12), R(13)],
        )
        assert.equal(page.body.totalCount, 13)
        const defaults = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q', { token: viewer })
        assert.deepEqual([defaults.body.limit, defaults.body.offset, defaults.body.results.length], [100, 0, 13])
      })

      it('filters by entityType, actionType and userId (exact), combined', async () => {
        const byType = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&entityType=lot', { token: viewer })
        assert.deepEqual(
          byType.body.results.map((e: { entityId: string }) => e.entityId),
          ['L-1'],
        )
        const byAction = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&actionType=release&entityType=batch', {
          token: viewer,
        })
        assert.equal(byAction.body.totalCount, 6)
        assert.ok(byAction.body.results.every((e: { actionType: string }) => e.actionType === 'release'))
        const byUser = await server.api('GET', `/oi-api/provenance/events/query?scopeKey=q&userId=${server.accounts.approver.id}`, {
          token: viewer,
        })
        assert.deepEqual(
          byUser.body.results.map((e: { actionType: string }) => e.actionType),
          ['hold'],
        )
        const none = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&entityType=Batch', { token: viewer })
        assert.equal(none.body.totalCount, 0, 'exact, case-sensitive matches')
      })

      it('filters by startDate (inclusive) and endDate (exclusive; a date alone includes that day)', async () => {
        const all = (await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&order=asc', { token: viewer })).body.results as {
          RecordID: string
          timestamp: string
        }[]
        const pivot = all[6]!.timestamp
        const from = await server.api(
          'GET',
          `/oi-api/provenance/events/query?scopeKey=q&startDate=${encodeURIComponent(pivot)}&order=asc`,
          { token: viewer },
        )
        assert.deepEqual(
          from.body.results.map((e: { timestamp: string }) => e.timestamp),
          all.filter((e) => e.timestamp >= pivot).map((e) => e.timestamp),
        )
        const to = await server.api('GET', `/oi-api/provenance/events/query?scopeKey=q&endDate=${encodeURIComponent(pivot)}&order=asc`, {
          token: viewer,
        })
        assert.deepEqual(
          to.body.results.map((e: { timestamp: string }) => e.timestamp),
          all.filter((e) => e.timestamp < pivot).map((e) => e.timestamp),
        )
        const day = pivot.slice(0, 10)
        const wholeDay = await server.api('GET', `/oi-api/provenance/events/query?scopeKey=q&startDate=${day}&endDate=${day}`, {
          token: viewer,
        })
        assert.equal(wholeDay.body.totalCount, 13)
        const future = await server.api('GET', '/oi-api/provenance/events/query?scopeKey=q&startDate=2999-01-01', { token: viewer })
        assert.equal(future.body.totalCount, 0)
      })

      it('400 for bad limits, offsets, orders and dates', async () => {
        const cases: [string, RegExp][] = [
          ['limit=0', /limit must be at least 1/],
          ['limit=1001', /limit is at most 1000/],
          ['limit=ten', /limit must be a whole number/],
          ['limit=2.5', /limit must be a whole number/],
          ['offset=-1', /offset must not be negative/],
          ['order=newest', /order is desc \(newest first\) or asc/],
          ['startDate=yesterday', /startDate must be an ISO 8601 date/],
          ['endDate=2026-02-30', /endDate must be an ISO 8601 date/],
          ['startDate=2026-01-01T10:00:00', /startDate must be an ISO 8601 date/],
          ['startDate=2026-02-01&endDate=2026-01-01', /startDate \(2026-02-01\) is after endDate/],
          ['scopeKey=', /ScopeKey must not be empty/],
          ['entityType=a%00b', /NUL character/],
          ['userId=%00', /NUL character/],
        ]
        for (const [q, message] of cases) {
          const r = await server.api(
            'GET',
            `/oi-api/provenance/events/query?scopeKey=q&${q}`.replace('scopeKey=q&scopeKey=', 'scopeKey='),
            { token: viewer },
          )
          assert.equal(r.status, 400, q)
          assert.match(errorMessage(r), message, q)
        }
      })

      it('without scopeKey: the Platform-Config records, with every call and decision', async () => {
        const r = await server.api('GET', '/oi-api/provenance/events/query?limit=1000', { token: viewer })
        assert.equal(r.status, 200)
        assert.equal(r.body.ScopeKey, null)
        const types = new Set(r.body.results.map((e: { entityType: string }) => e.entityType))
        assert.ok(types.has('api-call') && types.has('token'), [...types].join(','))
        assert.ok(r.body.results.every((e: { ScopeKey: string | null }) => e.ScopeKey === null))
      })
    })

    describe('verify', () => {
      const verify = (body: unknown, token = analyst) => server.api('POST', '/oi-api/provenance/events/verify', { token, body })
      before(async () => {
        for (const e of events('v', 5)) assert.equal((await append(e)).status, 200)
      })

      it('whole chain: Valid null, ChainValid true; with a RecordID: Valid true too', async () => {
        const whole = await verify({ ScopeKey: 'v' })
        assert.equal(whole.status, 200)
        assert.deepEqual(Object.keys(whole.body), ['Valid', 'ChainValid', 'Empty', 'BrokenAt', 'ForkDetected', 'Reason'])
        assert.deepEqual(
          { ...whole.body, Reason: undefined },
          { Valid: null, ChainValid: true, Empty: false, BrokenAt: null, ForkDetected: false, Reason: undefined },
        )
        assert.equal(
          whole.body.Reason,
          'OK: 5 records verified (000000000001 to 000000000005); all records are covered by a signed checkpoint (size 5)',
        )
        const one = await verify({ scopeKey: 'v', recordId: R(3) })
        assert.deepEqual(
          { ...one.body, Reason: undefined },
          { Valid: true, ChainValid: true, Empty: false, BrokenAt: null, ForkDetected: false, Reason: undefined },
        )
        const nullRecord = await verify({ ScopeKey: 'v', RecordID: null })
        assert.equal(nullRecord.body.Valid, null, 'a null RecordID is an absent one')
      })

      it('an unknown or unwritten container is Empty with ChainValid true; any RecordID there is a 404', async () => {
        const empty = await verify({ ScopeKey: 'never-written' })
        assert.deepEqual(empty.body, {
          Valid: null,
          ChainValid: true,
          Empty: true,
          BrokenAt: null,
          ForkDetected: false,
          Reason: 'EMPTY: nothing to check: the container has no records and never had any',
        })
        const record = await verify({ ScopeKey: 'never-written', RecordID: R(1) })
        assert.equal(record.status, 404)
        assert.match(errorMessage(record), /RecordID 000000000001 does not exist: the container is empty/)
      })

      it('a well-formed RecordID past the tip is a 404', async () => {
        const r = await verify({ ScopeKey: 'v', RecordID: R(6) })
        assert.equal(r.status, 404)
        assert.match(errorMessage(r), /RecordID 000000000006 does not exist: the chain ends at 000000000005/)
      })

      it('every malformed RecordID is a 400 before anything is read, never a whole-chain verify', async () => {
        const malformed: unknown[] = [...MALFORMED_RECORD_IDS, 1, 1.0, true, ['000000000001'], { id: 1 }]
        for (const RecordID of malformed) {
          const r = await verify({ ScopeKey: 'v', RecordID })
          assert.equal(r.status, 400, `RecordID ${JSON.stringify(RecordID)}: ${r.text}`)
          assert.match(errorMessage(r), /RecordID/, JSON.stringify(RecordID))
        }
        // …also for a container that does not exist: the shape is checked before any look-up.
        const unknown = await verify({ ScopeKey: 'never-written', RecordID: '1' })
        assert.equal(unknown.status, 400)
        const legacy = await server.api('POST', '/oi-api/audit-logs/v/events/verify', {
          token: analyst,
          body: { RecordID: ' 000000000001' },
        })
        assert.equal(legacy.status, 400)
      })

      it('without ScopeKey it verifies the Platform-Config records; unknown fields are a 400', async () => {
        const platform = await verify({})
        assert.equal(platform.status, 200)
        assert.equal(platform.body.ChainValid, true)
        assert.match(platform.body.Reason, /^OK: \d+ records verified/)
        const noBody = await server.api('POST', '/oi-api/provenance/events/verify', { token: analyst })
        assert.equal(noBody.status, 200)
        const unknown = await verify({ ScopeKey: 'v', Full: true })
        assert.equal(unknown.status, 400)
        assert.match(errorMessage(unknown), /unknown field "Full"; verify takes ScopeKey, RecordID and TrustedCheckpoint/)
      })

      it('TrustedCheckpoint: a kept checkpoint covers the chain; one for another container or not signed by the server is a 400', async () => {
        const latest = await server.api('GET', '/oi-api/provenance/checkpoints/latest?scopeKey=v', { token: viewer })
        const kept = latest.body.checkpoint as string
        const ok = await verify({ ScopeKey: 'v', TrustedCheckpoint: kept })
        assert.equal(ok.body.ChainValid, true)
        assert.match(ok.body.Reason, /all records are covered by a signed checkpoint \(size 5\)$/)
        const foreign = await verify({ ScopeKey: 'q', TrustedCheckpoint: kept })
        assert.equal(foreign.status, 400)
        assert.match(errorMessage(foreign), /TrustedCheckpoint is not usable: checkpoint is for .*scope%3Av", not/)
        const forged = kept.replace(
          /\n— .*$/s,
          '\n— someone-else/activity-log AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n',
        )
        const untrusted = await verify({ ScopeKey: 'v', TrustedCheckpoint: forged })
        assert.equal(untrusted.status, 400)
        assert.match(errorMessage(untrusted), /TrustedCheckpoint is not usable/)
      })
    })

    describe('checkpoints and proofs', () => {
      before(async () => {
        for (const e of events('p', 7)) assert.equal((await append(e)).status, 200)
      })

      it('the latest checkpoint is a C2SP note signed by the key published without a token', async () => {
        const keyResponse = await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)
        assert.equal(keyResponse.status, 200)
        const key = (await keyResponse.json()) as { verifierKey: string; keyName: string; algorithm: string }
        assert.equal(key.algorithm, 'Ed25519')
        const text = await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key.txt`)).text()
        assert.equal(text, `${key.verifierKey}\n`)
        const vkey = parseVerifierKey(key.verifierKey)
        const r = await server.api('GET', '/oi-api/provenance/checkpoints/latest?scopeKey=p', { token: viewer })
        assert.equal(r.status, 200, r.text)
        assert.deepEqual([r.body.ScopeKey, r.body.log, r.body.size], ['p', 'scope', 7])
        const cp = openCheckpoint(r.body.checkpoint, [vkey], r.body.origin)
        assert.equal(cp.size, 7)
        assert.equal(Buffer.from(cp.root).toString('hex'), r.body.rootHash)
        assert.ok(cp.time !== null && Math.abs(cp.time * 1000 - Date.parse(r.body.issuedAt)) < 1000)
        assert.match(r.body.origin, /\/activity-log\/wks_[a-z2-7]+\/scope%3Ap$/)
        const heads = await server.api('GET', '/oi-api/provenance/checkpoints/latest?headsLog=true', { token: viewer })
        assert.equal(heads.body.log, 'heads')
        openCheckpoint(heads.body.checkpoint, [vkey], heads.body.origin)
        const platform = await server.api('GET', '/oi-api/provenance/checkpoints/latest', { token: viewer })
        assert.equal(platform.body.log, 'platform')
        const none = await server.api('GET', '/oi-api/provenance/checkpoints/latest?scopeKey=never-written', { token: viewer })
        assert.equal(none.status, 404)
      })

      it('inclusion proofs verify against the signed root (RFC 9162 §2.1.3.2); 404 past the tip, 400 for a bad size', async () => {
        const cp = await server.api('GET', '/oi-api/provenance/checkpoints/latest?scopeKey=p', { token: viewer })
        const records = (await server.api('GET', '/oi-api/provenance/events/query?scopeKey=p&order=asc', { token: viewer })).body
          .results as { RecordID: string; digest: string }[]
        for (const rec of records) {
          const r = await server.api('GET', `/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=${rec.RecordID}`, { token: viewer })
          assert.equal(r.status, 200, r.text)
          assert.deepEqual(
            [r.body.treeSize, r.body.rootHash, r.body.leafHash, r.body.checkpoint],
            [7, cp.body.rootHash, rec.digest, cp.body.checkpoint],
          )
          assert.ok(
            verifyInclusion(
              r.body.leafIndex,
              7,
              Buffer.from(rec.digest, 'hex'),
              r.body.proof.map((h: string) => Buffer.from(h, 'hex')),
              Buffer.from(cp.body.rootHash, 'hex'),
            ),
          )
        }
        const small = await server.api('GET', '/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=000000000002&treeSize=3', {
          token: viewer,
        })
        assert.equal(small.status, 200)
        const cp3 = openCheckpoint(small.body.checkpoint, [
          parseVerifierKey(
            ((await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)).json()) as { verifierKey: string })
              .verifierKey,
          ),
        ])
        assert.ok(
          verifyInclusion(
            1,
            3,
            Buffer.from(records[1]!.digest, 'hex'),
            small.body.proof.map((h: string) => Buffer.from(h, 'hex')),
            cp3.root,
          ),
        )
        const past = await server.api('GET', '/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=000000000008', { token: viewer })
        assert.equal(past.status, 404)
        const tooBig = await server.api('GET', '/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=000000000002&treeSize=99', {
          token: viewer,
        })
        assert.equal(tooBig.status, 400)
        assert.match(errorMessage(tooBig), /treeSize 99 is larger than the container \(7 records\)/)
        const notIn = await server.api('GET', '/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=000000000005&treeSize=3', {
          token: viewer,
        })
        assert.equal(notIn.status, 400)
        const malformed = await server.api('GET', '/oi-api/provenance/proofs/inclusion?scopeKey=p&RecordID=5', { token: viewer })
        assert.equal(malformed.status, 400)
      })

      it('consistency proofs between every pair of sizes verify (RFC 9162 §2.1.4.2), and fail for a wrong root', async () => {
        for (let from = 1; from <= 7; from++) {
          const r = await server.api('GET', `/oi-api/provenance/proofs/consistency?scopeKey=p&from=${from}`, { token: viewer })
          assert.equal(r.status, 200, r.text)
          assert.equal(r.body.toSize, 7)
          const proof = r.body.proof.map((h: string) => Buffer.from(h, 'hex'))
          assert.ok(
            verifyConsistency(from, 7, Buffer.from(r.body.fromRoot, 'hex'), Buffer.from(r.body.toRoot, 'hex'), proof),
            `from ${from}`,
          )
          const wrong = Buffer.from(r.body.fromRoot, 'hex')
          wrong[0]! ^= 1
          assert.ok(!verifyConsistency(from, 7, wrong, Buffer.from(r.body.toRoot, 'hex'), proof))
          assert.ok(r.body.fromCheckpoint === null || r.body.fromCheckpoint.includes(`\n${from}\n`))
        }
        const reversed = await server.api('GET', '/oi-api/provenance/proofs/consistency?scopeKey=p&from=5&to=3', { token: viewer })
        assert.equal(reversed.status, 400)
        assert.match(errorMessage(reversed), /from \(5\) must not be larger than to \(3\)/)
      })
    })

    describe('export', () => {
      before(async () => {
        for (const e of events('x', 6, { note: 'Entrée — ✓ "quoted", comma, \nnew line' })) assert.equal((await append(e)).status, 200)
      })

      for (const format of ['json', 'csv'] as const) {
        it(`${format}: every field including digests, the newest checkpoint and a seal; verifies offline with the published key`, async () => {
          const r = await server.api('GET', `/oi-api/provenance/events/export?scopeKey=x&format=${format}`, { token: viewer })
          assert.equal(r.status, 200, r.text)
          assert.match(r.headers.get('content-type')!, format === 'json' ? /^application\/json/ : /^text\/csv/)
          assert.match(
            r.headers.get('content-disposition')!,
            new RegExp(`attachment; filename="activity-log-x-\\d{4}-\\d{2}-\\d{2}\\.${format}"`),
          )
          const key = parseVerifierKey(
            ((await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)).json()) as { verifierKey: string })
              .verifierKey,
          )
          const checked = await verifyExport([r.text], { trustedKeys: [key] })
          assert.equal(checked.result.kind, 'verdict')
          if (checked.result.kind !== 'verdict') return
          assert.deepEqual(
            { ...checked.result.verdict, Reason: undefined },
            { Valid: null, ChainValid: true, Empty: false, BrokenAt: null, ForkDetected: false, Reason: undefined },
          )
          assert.match(
            checked.result.verdict.Reason,
            /^OK: 6 records verified \(000000000001 to 000000000006\); all records are covered by a signed checkpoint \(size 6\)$/,
          )
          assert.deepEqual([checked.recordsRead, checked.recordCountMatches, checked.seal.status], [6, true, 'valid'])
          const edited = r.text.replace('B-3', 'B-9')
          assert.notEqual(edited, r.text)
          const bad = await verifyExport([edited], { trustedKeys: [key] })
          assert.equal(bad.result.kind === 'verdict' && bad.result.verdict.ChainValid, false)
        })
      }

      it('a date range exports that part, tied by proof to the newest checkpoint; an empty range is an empty export', async () => {
        const all = (await server.api('GET', '/oi-api/provenance/events/query?scopeKey=x&order=asc', { token: viewer })).body.results as {
          timestamp: string
        }[]
        const r = await server.api(
          'GET',
          `/oi-api/provenance/events/export?scopeKey=x&startDate=${encodeURIComponent(all[2]!.timestamp)}&endDate=${encodeURIComponent(all[4]!.timestamp)}`,
          { token: viewer },
        )
        assert.equal(r.status, 200)
        const key = parseVerifierKey(
          ((await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)).json()) as { verifierKey: string }).verifierKey,
        )
        const checked = await verifyExport([r.text], { trustedKeys: [key] })
        assert.ok(checked.result.kind === 'verdict')
        const expected = all.filter((e) => e.timestamp >= all[2]!.timestamp && e.timestamp < all[4]!.timestamp).length
        assert.equal(checked.recordsRead, expected)
        assert.equal(checked.result.verdict.ChainValid, true, checked.result.verdict.Reason)
        assert.match(checked.result.verdict.Reason, /all records are covered by a signed checkpoint/)
        assert.equal(checked.header.filter['startDate'], all[2]!.timestamp)
        const none = await server.api('GET', '/oi-api/provenance/events/export?scopeKey=x&startDate=2999-01-01', { token: viewer })
        const empty = await verifyExport([none.text], { trustedKeys: [key] })
        assert.ok(empty.result.kind === 'verdict' && empty.result.verdict.Empty && empty.recordsRead === 0)
      })

      it('400 for an unknown format; 403 without provenance:read', async () => {
        const bad = await server.api('GET', '/oi-api/provenance/events/export?scopeKey=x&format=xml', { token: viewer })
        assert.equal(bad.status, 400)
        assert.match(errorMessage(bad), /format is json or csv/)
        const noRead = await server.token('editor', { rights: ['provenance:append'] })
        assert.equal((await server.api('GET', '/oi-api/provenance/events/export?scopeKey=x', { token: noRead })).status, 403)
      })
    })
  })

  describe(`${backend}: activity log, earlier per-log shape (spec 4.7)`, () => {
    let server: TestServer
    let editor: string
    before(async () => {
      server = await startTestServer(backend)
      editor = await server.token('editor')
    })
    after(() => server.stop())

    it("appends to {lookup}; actor and action are the current shape's userId and actionType; both views show the same log", async () => {
      const r = await server.api('POST', '/oi-api/audit-logs/line-9/events', {
        token: editor,
        body: { entityType: 'batch', entityId: 'B-1', actionType: 'create', details: { a: 1 } },
      })
      assert.equal(r.status, 200, r.text)
      assert.deepEqual(Object.keys(r.body), [
        'RecordID',
        'lookup',
        'entityType',
        'entityId',
        'action',
        'actor',
        'timestamp',
        'details',
        'previousDigest',
        'digest',
      ])
      assert.deepEqual([r.body.RecordID, r.body.lookup, r.body.action, r.body.actor], [R(1), 'line-9', 'create', server.accounts.editor.id])
      const current = await server.api('POST', '/oi-api/provenance/events', {
        token: editor,
        body: { ScopeKey: 'line-9', actionType: 'release' },
      })
      assert.equal(current.body.RecordID, R(2))
      assert.equal(current.body.previousDigest, r.body.digest)
      const mismatch = await server.api('POST', '/oi-api/audit-logs/line-9/events', { token: editor, body: { ScopeKey: 'other' } })
      assert.equal(mismatch.status, 400)
      assert.match(errorMessage(mismatch), /differs from the log "line-9"/)
      const actor = await server.api('POST', '/oi-api/audit-logs/line-9/events', { token: editor, body: { actor: 'mallory' } })
      assert.equal(actor.status, 400)
      assert.match(errorMessage(actor), /"actor" cannot be sent/)
    })

    it('query filters by actor and action, newest first', async () => {
      const q = await server.api('GET', `/oi-api/audit-logs/line-9/events/query?actor=${server.accounts.editor.id}&action=release`, {
        token: editor,
      })
      assert.equal(q.status, 200, q.text)
      assert.deepEqual([q.body.lookup, q.body.totalCount, q.body.results[0].RecordID], ['line-9', 1, R(2)])
      const all = await server.api('GET', '/oi-api/audit-logs/line-9/events/query', { token: editor })
      assert.deepEqual(
        all.body.results.map((e: { RecordID: string }) => e.RecordID),
        [R(2), R(1)],
      )
      const bad = await server.api('GET', '/oi-api/audit-logs/line-9/events/query?limit=0', { token: editor })
      assert.equal(bad.status, 400)
    })

    it('verify answers an object beginning with isValid, then recordCount, brokenAt, reason', async () => {
      const v = await server.api('POST', '/oi-api/audit-logs/line-9/events/verify', { token: editor })
      assert.equal(v.status, 200, v.text)
      assert.deepEqual(Object.keys(v.body), ['isValid', 'recordCount', 'brokenAt', 'reason'])
      assert.deepEqual([v.body.isValid, v.body.recordCount, v.body.brokenAt], [true, 2, null])
      const withRecord = await server.api('POST', '/oi-api/audit-logs/line-9/events/verify', { token: editor, body: { RecordID: R(2) } })
      assert.equal(withRecord.body.isValid, true)
      const past = await server.api('POST', '/oi-api/audit-logs/line-9/events/verify', { token: editor, body: { RecordID: R(3) } })
      assert.equal(past.status, 404)
      const empty = await server.api('POST', '/oi-api/audit-logs/nothing-here/events/verify', { token: editor })
      assert.deepEqual(empty.body, {
        isValid: true,
        recordCount: 0,
        brokenAt: null,
        reason: 'EMPTY: nothing to check: the container has no records and never had any',
      })
    })

    it("export is the same file as the current shape's", async () => {
      const legacy = await server.api('GET', '/oi-api/audit-logs/line-9/events/export?format=csv', { token: editor })
      assert.equal(legacy.status, 200)
      const checked = await verifyExport([legacy.text], { trustEmbeddedKeys: true })
      assert.ok(checked.result.kind === 'verdict' && checked.result.verdict.ChainValid && checked.recordsRead === 2)
      assert.equal(checked.header.ScopeKey, 'line-9')
    })

    it('the per-log operations are marked deprecated in the OpenAPI description', async () => {
      const doc = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })).body as {
        paths: Record<string, Record<string, { deprecated?: boolean }>>
      }
      assert.equal(doc.paths['/oi-api/audit-logs/{lookup}/events']!['post']!.deprecated, true)
      assert.equal(doc.paths['/oi-api/audit-logs/{lookup}/events/query']!['get']!.deprecated, true)
      assert.equal(doc.paths['/oi-api/audit-logs/{lookup}/events/verify']!['post']!.deprecated, true)
      assert.equal(doc.paths['/oi-api/audit-logs/{lookup}/events/export']!['get']!.deprecated, true)
      assert.equal(doc.paths['/oi-api/provenance/events']!['post']!.deprecated, undefined)
    })
  })
}
