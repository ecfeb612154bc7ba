/**
 * One RecordID rule at every edge (spec 2.6, 4.5 rule 4; issue 19 item 1): the API (both shapes),
 * the portal and the CLI hand the raw value to the domain, which refuses anything but exactly 12
 * ASCII digits with the same sentence. The portal used to trim the field first, so
 * " 000000000001 " verified record 1 there and was a 400 everywhere else.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseRecordId } from '../../src/domain/ledger/record-id.js'
import { signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { runCli } from '../support/cli.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const PADDED = ' 000000000001 '
const REASON = (() => {
  const parsed = parseRecordId(PADDED)
  assert.equal(parsed.ok, false)
  return parsed.ok ? '' : parsed.reason
})()
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

for (const backend of BACKENDS) {
  describe(`${backend}: a RecordID with surrounding spaces is refused alike by API, portal and CLI`, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(backend)
      const r = await server.api('POST', '/oi-api/provenance/events', {
        token: await server.token('editor'),
        body: { ScopeKey: 'lab', entityType: 'batch', entityId: 'B-1', actionType: 'release' },
      })
      assert.equal(r.status, 200, r.text)
    })
    after(() => server.stop())

    it('API, current and per-log shape: 400 with the domain reason, nothing verified', async () => {
      const token = await server.token('admin')
      for (const [path, body] of [
        ['/oi-api/provenance/events/verify', { ScopeKey: 'lab', RecordID: PADDED }],
        ['/oi-api/audit-logs/lab/events/verify', { RecordID: PADDED }],
      ] as const) {
        const r = await server.api('POST', path, { token, body })
        assert.equal(r.status, 400, `${path}: ${r.text}`)
        assert.match(r.text, new RegExp(REASON.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), path)
      }
      const proof = await server.api('GET', `/oi-api/provenance/proofs/inclusion?scopeKey=lab&RecordID=${encodeURIComponent(PADDED)}`, {
        token,
      })
      assert.equal(proof.status, 400, proof.text)
    })

    it('portal: a 400 page with the same reason, not a verdict for record 1', async () => {
      const analyst = await signedIn(server, 'analyst')
      const r = await analyst.post('/portal/activity/verify', { scope: 'lab', RecordID: PADDED })
      assert.equal(r.status, 400, 'the portal must not trim the RecordID')
      assert.ok(r.text.includes(escapeHtml(REASON)), 'the domain reason is shown')
      assert.doesNotMatch(r.text, /recomputes to its stored digest/)
    })

    it('CLI: a usage error (exit 2) with the same reason', async () => {
      const store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
      const r = await runCli(['verify', '--scope', 'lab', '--record', PADDED, ...store])
      assert.equal(r.code, 2, r.stderr)
      assert.ok(r.stderr.includes(REASON), r.stderr)
    })
  })
}
