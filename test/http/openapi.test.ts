/**
 * Spec 4.4, 5.7, 9: the OpenAPI 3.1 description is valid and lists exactly what the caller's
 * effective rights permit.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { apiRightsOf } from '../../src/domain/access/rights.js'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

type Doc = { openapi: string; paths: Record<string, Record<string, { 'x-required-rights': string[] }>> }

/** One operation of each spec section: an admin's document must describe them all. */
const SPEC_OPERATIONS = [
  'GET /oi-api/warm-queries/{lookup}',
  'POST /oi-api/warm-queries',
  'POST /oi-api/ingest/data-connections/{lookup}',
  'POST /oi-api/downloads/surfaces/{surface}',
  'GET /oi-api/live-stream',
  'GET /oi-api/eac-changes/stream',
  'POST /oi-api/mcp',
  'GET /oi-api/provenance/events/query',
  'POST /oi-api/provenance/events/verify',
  'POST /oi-api/provenance/amendments',
  'GET /oi-api/audit-logs/{lookup}/events/query',
  'GET /oi-api/openapi',
]

function operations(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort()
}

for (const backend of BACKENDS) {
  describe(`${backend}: OpenAPI description (spec 4.4)`, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(backend)
    })
    after(() => server.stop())

    it('is a valid OpenAPI 3.1 document', async () => {
      const response = await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })
      assert.equal(response.status, 200)
      assert.equal(response.body.openapi, '3.1.0')
      const result = await new Validator().validate(response.body)
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
      // An empty document is valid too: it must also describe what the server serves.
      const described = operations(response.body as Doc)
      assert.deepEqual(
        SPEC_OPERATIONS.filter((op) => !described.includes(op)),
        [],
        'operations missing from the document',
      )
    })

    it('needs a valid token', async () => {
      assert.equal((await server.api('GET', '/oi-api/openapi')).status, 401)
    })

    it('lists only operations whose every right the token holds', async () => {
      const full = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })).body as Doc
      const narrow = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin', { rights: ['warm-queries:read'] }) }))
        .body as Doc
      for (const [path, methods] of Object.entries(narrow.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          assert.ok(
            op['x-required-rights'].every((r) => r === 'warm-queries:read'),
            `${method} ${path} needs ${op['x-required-rights']}`,
          )
        }
      }
      assert.ok(operations(full).length > operations(narrow).length)
      assert.ok(operations(narrow).includes('GET /oi-api/openapi'))
      assert.ok(!operations(narrow).includes('GET /oi-api/provenance/reason-categories'))
    })

    it('a read-only token sees every read operation it may use, and no write operation', async () => {
      const full = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })).body as Doc
      const doc = (await server.api('GET', '/oi-api/openapi', { token: await server.token('viewer') })).body as Doc
      const viewerRights: readonly string[] = apiRightsOf('viewer')
      const allowed = Object.entries(full.paths)
        .flatMap(([path, methods]) =>
          Object.entries(methods)
            .filter(([, op]) => op['x-required-rights'].every((r) => viewerRights.includes(r)))
            .map(([method]) => `${method.toUpperCase()} ${path}`),
        )
        .sort()
      assert.deepEqual(operations(doc), allowed)
      for (const op of ['GET /oi-api/warm-queries/{lookup}', 'GET /oi-api/provenance/events/query', 'GET /oi-api/live-stream']) {
        assert.ok(operations(doc).includes(op), `a viewer's document lacks ${op}`)
      }
      const writes = [
        'provenance:append',
        'amendments:create',
        'amendments:approve',
        'ingest:write',
        'proposals:create',
        'exports:create',
        'queries:run',
      ]
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          assert.ok(!op['x-required-rights'].some((r) => writes.includes(r)), `${method} ${path} is a write operation`)
        }
      }
    })
  })
}
