/**
 * "Every call and decision is recorded" (spec 1; design §5; issue 4, item 5): each /oi-api call
 * appends an `api-call` record to the Platform-Config container, committed before the response is
 * sent, with method, route template, status, duration, token id and client address and never a
 * token, secret, query string or body; when the record cannot be committed the call fails with
 * 503. Decisions (token created/revoked, configuration applied, ingest batch) append their own
 * records in the transaction of the change.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { z } from 'zod'
import { platformContainer } from '../../src/domain/ledger/ledger-service.js'
import { apiServicesOf } from '../../src/domain/services.js'
import { buildApp } from '../../src/http/app.js'
import { defineRoute } from '../../src/http/route-registry.js'
import { apiRoutes } from '../../src/http/routes/index.js'
import { BACKENDS, type PerBackend } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { openRawDatabase } from '../support/raw-database.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

interface PlatformRecord {
  RecordID: string
  entityType: string
  entityId: string
  actionType: string
  userId: string
  details: Record<string, unknown>
}

function jti(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { jti: string }).jti
}

/**
 * A trigger that makes the store refuse every api-call record, as a full disk would. Each backend
 * writes it in its own SQL; adding a backend fails to compile until it has one.
 */
const REFUSE_API_CALLS: PerBackend<{ readonly install: readonly string[]; readonly remove: readonly string[] }> = {
  sqlite: {
    install: [
      "CREATE TRIGGER refuse_api_calls BEFORE INSERT ON ledger_records WHEN NEW.entity_type = 'api-call' BEGIN SELECT RAISE(ABORT, 'injected: disk full'); END",
    ],
    remove: ['DROP TRIGGER refuse_api_calls'],
  },
  postgres: {
    install: [
      "CREATE FUNCTION refuse_api_calls() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected: disk full'; END $$",
      "CREATE TRIGGER refuse_api_calls BEFORE INSERT ON ledger_records FOR EACH ROW WHEN (NEW.entity_type = 'api-call') EXECUTE FUNCTION refuse_api_calls()",
    ],
    remove: ['DROP TRIGGER refuse_api_calls ON ledger_records', 'DROP FUNCTION refuse_api_calls()'],
  },
}

for (const backend of BACKENDS) {
  describe(`${backend}: every call and decision is recorded`, () => {
    let server: TestServer
    let analyst: string

    /** The Platform-Config records, read straight from the service (no call of its own). */
    async function platform(filter: { entityType?: string } = {}): Promise<PlatformRecord[]> {
      const { records } = await server.services.ledger.query(platformContainer(server.workspace.id), filter, {
        limit: 1000,
        offset: 0,
        order: 'asc',
      })
      return records.map((v) => ({
        RecordID: v.record.recordId,
        entityType: v.entityType!,
        entityId: v.entityId!,
        actionType: v.actionType!,
        userId: v.record.userId,
        details: v.details as Record<string, unknown>,
      }))
    }
    const callRecord = async (requestId: string) => (await platform({ entityType: 'api-call' })).find((r) => r.entityId === requestId)

    before(async () => {
      server = await startTestServer(backend)
      analyst = await server.token('analyst')
    })
    after(() => server.stop())

    it('each call appends an api-call record, committed before the response arrives', async () => {
      const calls: [string, string, number, unknown?][] = [
        ['GET', '/oi-api/provenance/reason-categories', 200],
        ['GET', '/oi-api/warm-queries/no/such/query', 404],
        ['POST', '/oi-api/warm-queries', 400, { Query: 'this is not KQL' }],
        ['POST', '/oi-api/provenance/events', 403, { ScopeKey: 'line-1' }],
        ['GET', '/oi-api/provenance/events/query?scopeKey=line-1&entityType=x', 200],
      ]
      for (const [method, path, status, body] of calls) {
        const response = await server.api(method, path, { token: analyst, ...(body !== undefined ? { body } : {}) })
        assert.equal(response.status, status, response.text)
        const requestId = response.headers.get('x-request-id')!
        // Read at once: the reply was only sent after the record's commit.
        const record = await callRecord(requestId)
        assert.ok(record, `${method} ${path}: no api-call record for request ${requestId}`)
        const route = path.replace(/\?.*$/, '').replace(/^\/oi-api\/warm-queries\/.*/, '/oi-api/warm-queries/*')
        assert.equal(record.actionType, `${method} ${route}`)
        assert.equal(record.userId, server.accounts.analyst.id)
        assert.deepEqual(Object.keys(record.details).sort(), [
          'accountName',
          'clientAddress',
          'durationMs',
          'method',
          'requestId',
          'route',
          'status',
          'tokenId',
        ])
        assert.deepEqual(
          [
            record.details['method'],
            record.details['route'],
            record.details['status'],
            record.details['tokenId'],
            record.details['requestId'],
          ],
          [method, route, status, jti(analyst), requestId],
        )
        assert.equal(typeof record.details['durationMs'], 'number')
        assert.match(String(record.details['clientAddress']), /127\.0\.0\.1/)
      }
    })

    it('an append and its call record share one commit: exactly one api-call record, status 200', async () => {
      const editor = await server.token('editor')
      const response = await server.api('POST', '/oi-api/provenance/events', {
        token: editor,
        body: { ScopeKey: 'shared-commit', actionType: 'create' },
      })
      assert.equal(response.status, 200, response.text)
      const records = (await platform({ entityType: 'api-call' })).filter((r) => r.entityId === response.headers.get('x-request-id'))
      assert.equal(records.length, 1)
      assert.deepEqual([records[0]!.actionType, records[0]!.details['status']], ['POST /oi-api/provenance/events', 200])
      const legacy = await server.api('POST', '/oi-api/audit-logs/shared-commit/events', { token: editor, body: { actionType: 'update' } })
      assert.equal(legacy.status, 200)
      const legacyRecords = (await platform({ entityType: 'api-call' })).filter((r) => r.entityId === legacy.headers.get('x-request-id'))
      assert.deepEqual(
        legacyRecords.map((r) => [r.actionType, r.details['status']]),
        [['POST /oi-api/audit-logs/:lookup/events', 200]],
      )
      // A refused body is recorded with the status it got, and nothing is appended.
      const refused = await server.api('POST', '/oi-api/provenance/events', {
        token: editor,
        body: { ScopeKey: 'shared-commit', userId: 'x' },
      })
      assert.equal(refused.status, 400)
      const refusedRecords = (await platform({ entityType: 'api-call' })).filter((r) => r.entityId === refused.headers.get('x-request-id'))
      assert.deepEqual(
        refusedRecords.map((r) => r.details['status']),
        [400],
      )
    })

    it('never records the token, the query string or the body', async () => {
      const secret = `s3cr3t-${Date.now()}`
      await server.api('GET', `/oi-api/provenance/events/query?scopeKey=line-1&entityType=${secret}`, { token: analyst })
      await server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: `print x = "${secret}"` } })
      const text = JSON.stringify(await platform())
      assert.ok(!text.includes(secret), 'a query-string or body value reached the log')
      assert.ok(!text.includes(analyst) && !text.includes(analyst.split('.')[2]!), 'the token reached the log')
    })

    it('calls without a valid token are not recorded in any workspace log (no workspace is known)', async () => {
      const before = (await platform({ entityType: 'api-call' })).length
      const response = await server.api('GET', '/oi-api/provenance/reason-categories', { token: 'not.a.token' })
      assert.equal(response.status, 401)
      assert.equal((await platform({ entityType: 'api-call' })).length, before)
    })

    it('decisions: token created and revoked, configuration applied, ingest batches, in the transaction of the change', async () => {
      // Token created and revoked.
      const created = await server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts.viewer.id,
        name: 'decision test',
        expires: '1h',
        createdBy: { id: server.accounts.admin.id, name: server.accounts.admin.name },
      })
      await server.services.access.revokeToken(server.workspace.id, created.record.id, {
        id: server.accounts.admin.id,
        name: server.accounts.admin.name,
        canRevokeOthers: true,
      })
      const tokenRecords = (await platform({ entityType: 'token' })).filter((r) => r.entityId === created.record.id)
      assert.deepEqual(
        tokenRecords.map((r) => r.actionType),
        ['created', 'revoked'],
      )
      assert.equal(tokenRecords[0]!.userId, server.accounts.admin.id)
      assert.deepEqual(
        { ...tokenRecords[0]!.details, expiresAt: undefined, scopes: undefined, rights: undefined },
        {
          name: 'decision test',
          ownerId: server.accounts.viewer.id,
          owner: server.accounts.viewer.name,
          expiresAt: undefined,
          scopes: undefined,
          rights: undefined,
          actor: { name: server.accounts.admin.name, via: 'portal' },
        },
      )
      assert.ok(!JSON.stringify(tokenRecords).includes(created.token), 'the token itself is never recorded')

      // Configuration applied; a refused document records nothing.
      const before = (await platform({ entityType: 'config' })).length
      await assert.rejects(applyAsAdmin(server, { connections: [{ lookup: 'bad lookup!' }] }))
      assert.equal((await platform({ entityType: 'config' })).length, before, 'a refused apply records no decision')
      await applyAsAdmin(server, sensorConfig())
      const config = (await platform({ entityType: 'config' })).at(-1)!
      const head = await server.services.config.current(server.workspace.id)
      assert.deepEqual(
        [config.entityId, config.actionType, config.userId, config.details['seq']],
        [head.commitId, 'applied', server.accounts.admin.id, head.seq],
      )
      assert.ok(Array.isArray(config.details['changes']) && (config.details['changes'] as string[]).length > 0)

      // Ingest batch; a refused batch records nothing.
      const editor = await server.token('editor')
      const refused = await server.api('POST', '/oi-api/ingest/data-connections/sensors', { token: editor, body: [{ timestamp: 'never' }] })
      assert.equal(refused.status, 400)
      assert.equal((await platform({ entityType: 'data-connection' })).length, 0)
      const pushed = await server.api('POST', '/oi-api/ingest/data-connections/sensors', {
        token: editor,
        body: [
          { timestamp: '2026-01-01T00:00:00Z', sensor: 'a', value: 1 },
          { timestamp: '2026-01-01T00:01:00Z', sensor: 'b', value: 2 },
        ],
      })
      assert.equal(pushed.status, 200, pushed.text)
      const ingest = (await platform({ entityType: 'data-connection' })).at(-1)!
      assert.deepEqual(
        [
          ingest.entityId,
          ingest.actionType,
          ingest.userId,
          ingest.details['rowCount'],
          ingest.details['firstRowId'],
          ingest.details['lastRowId'],
        ],
        ['sensors', 'rows-ingested', server.accounts.editor.id, 2, pushed.body.firstRowId, pushed.body.lastRowId],
      )
      assert.deepEqual(ingest.details['actor'], { name: server.accounts.editor.name, via: 'api' })

      // Every decision is checkpointed right after its commit, and the whole log verifies.
      await server.services.ledger.drain()
      const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token: analyst, body: {} })
      assert.equal(verdict.body.ChainValid, true, verdict.body.Reason)
      assert.doesNotMatch(verdict.body.Reason, /not yet covered/, 'the decisions committed in other transactions were checkpointed')
    })

    it('a call whose record cannot be committed fails with 503 instead of going unrecorded (JSON and streamed replies)', async () => {
      const db = await openRawDatabase(server)
      try {
        for (const sql of REFUSE_API_CALLS[db.dialect].install) await db.run(sql)
        const read = await server.api('GET', '/oi-api/provenance/reason-categories', { token: analyst })
        assert.equal(read.status, 503)
        assert.match(errorMessage(read), /the activity log could not record this call, so it was not completed/)
        // An append shares its commit with its call record: both are refused, so nothing was appended.
        const editor = await server.token('editor')
        const append = await server.api('POST', '/oi-api/provenance/events', { token: editor, body: { ScopeKey: 'during-outage' } })
        assert.equal(append.status, 503)
        const { total } = await server.services.ledger.query(
          { workspaceId: server.workspace.id, containerId: 'scope:during-outage' },
          {},
          { limit: 1, offset: 0, order: 'desc' },
        )
        assert.equal(total, 0, 'the append was rolled back with its call record')
        const exported = await server.api('GET', '/oi-api/provenance/events/export?scopeKey=line-1', { token: analyst })
        assert.equal(exported.status, 503)
        assert.equal(exported.headers.get('content-disposition'), null)
        errorMessage(exported)
        assert.ok(server.logLines.some((l) => l.includes('the api-call record could not be committed')))
      } finally {
        for (const sql of REFUSE_API_CALLS[db.dialect].remove) await db.run(sql)
        await db.close()
      }
      const again = await server.api('GET', '/oi-api/provenance/reason-categories', { token: analyst })
      assert.equal(again.status, 200, 'recording works again once the store accepts records')
    })

    it('routes declared hijacks: true are recorded by the registry when they hijack; an undeclared hijack is refused', async () => {
      const hijacking = defineRoute({
        method: 'GET',
        path: '/test/hijack',
        operationId: 'testHijack',
        summary: 'hijacks',
        tag: 'Test',
        rights: [],
        hijacks: true,
        responses: { 200: { description: 'raw' } },
        handler: async ({ reply, hijack }) => {
          await hijack(200, { kind: 'mcp', tool: 'list-warm-queries' })
          reply.raw.writeHead(200, { 'content-type': 'text/plain' })
          reply.raw.end('raw reply')
          return reply
        },
      })
      const undeclared = defineRoute({
        method: 'GET',
        path: '/test/undeclared-hijack',
        operationId: 'testUndeclaredHijack',
        summary: 'hijacks without saying so',
        tag: 'Test',
        rights: [],
        responses: { 200: { description: 'raw' } },
        handler: async ({ reply, hijack }) => {
          await hijack(200)
          reply.raw.end('never sent')
          return reply
        },
      })
      const app = await buildApp({
        services: apiServicesOf(server.services),
        routes: [...apiRoutes(apiServicesOf(server.services)), hijacking, undeclared],
        version: 'test',
        publicUrl: 'http://127.0.0.1',
        logger: false,
      })
      try {
        const url = await app.listen({ port: 0, host: '127.0.0.1' })
        const response = await fetch(`${url}/oi-api/test/hijack`, { headers: { authorization: `Bearer ${analyst}` } })
        assert.equal(await response.text(), 'raw reply')
        const record =
          (await callRecord(response.headers.get('x-request-id') ?? '')) ??
          (await platform({ entityType: 'api-call' })).find((r) => r.details['route'] === '/oi-api/test/hijack')
        assert.ok(record, 'the hijacked call was recorded')
        assert.deepEqual([record.details['status'], record.details['via']], [200, { kind: 'mcp', tool: 'list-warm-queries' }])
        const refused = await fetch(`${url}/oi-api/test/undeclared-hijack`, { headers: { authorization: `Bearer ${analyst}` } })
        assert.equal(refused.status, 500, 'a route that hijacks without declaring it is a bug, answered as one')
        assert.notEqual(await refused.text(), 'never sent')
      } finally {
        await app.close()
      }
    })

    it('the Platform-Config chain stays valid under concurrent calls and decisions', async () => {
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          i % 3 === 0
            ? server.services.access.createToken({
                workspaceId: server.workspace.id,
                accountId: server.accounts.viewer.id,
                name: `t${i}`,
                expires: '1h',
                createdBy: { id: 'cli', name: 'provenant CLI' },
              })
            : server.api('GET', '/oi-api/provenance/reason-categories', { token: analyst }),
        ),
      )
      await server.services.ledger.drain()
      const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token: analyst, body: {} })
      assert.equal(verdict.body.ChainValid, true, verdict.body.Reason)
      const records = await platform()
      assert.deepEqual(
        records.map((r) => r.RecordID),
        records.map((_, i) => String(i + 1).padStart(12, '0')),
        'gap-free',
      )
      const z1 = z.object({ via: z.literal('cli') })
      assert.ok(
        records.filter((r) => r.entityType === 'token' && r.userId === 'cli').every((r) => z1.safeParse(r.details['actor']).success),
      )
    })
  })
}
