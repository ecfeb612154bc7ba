/**
 * Refused writes change no stored data (issue 10, item 4). Every write of the OpenAPI description,
 * the portal's forms and the MCP endpoint receive input that must be refused — a valid body without
 * a token or without the right; invalid UTF-8 as raw bytes; truncated JSON; wrong types; deep
 * nesting; bodies over the limit; prototype-pollution keys; path traversal in lookups, ScopeKeys and
 * ids — and every table of the database (both backends) is compared before and after. What may
 * legitimately change while refusals are answered (call records and what derives from them) is left
 * out by test/support/table-snapshot.ts, which says why; the chains are verified instead.
 * PROVENANT_FUZZ_RUNS raises the number of generated cases per operation (default 4).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { PortalClient, signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { openRawDatabase, type RawDatabase } from '../support/raw-database.js'
import { type RawAnswer, sendRaw } from '../support/raw-http.js'
import { snapshotDifferences, snapshotTables, type TableSnapshot } from '../support/table-snapshot.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const RUNS = Number(process.env['PROVENANT_FUZZ_RUNS'] ?? 4)
const WINDOW = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }

/** A refusal: a 4xx in the error envelope (JSON-RPC errors on the MCP endpoint). */
function assertRefused(what: string, answer: RawAnswer): void {
  assert.ok(answer.status >= 400 && answer.status < 500, `${what} was not refused: ${answer.status} ${answer.text.slice(0, 300)}`)
  const body = JSON.parse(answer.text) as { HasError?: unknown; Messages?: { Error?: unknown } }
  assert.equal(body.HasError, true, `${what}: ${answer.text.slice(0, 200)}`)
  assert.equal(typeof body.Messages?.Error, 'string')
}

/** One write operation with a body it would accept (so every refusal is due to the one thing changed). */
interface Write {
  readonly method: string
  readonly template: string
  readonly path: string
  readonly body: unknown
  readonly right: string
}

/** Byte sequences that are never valid UTF-8: lone continuation, overlong, surrogate, truncated, 0xFF. */
const INVALID_UTF8 = [
  [0x80],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xff],
  [0xfe, 0xff],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
]

/** A value of another JSON type than `value` (never null, which some fields accept). */
function wrongTypeFor(value: unknown): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = []
  if (typeof value !== 'number') options.push(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })))
  if (typeof value !== 'boolean') options.push(fc.boolean())
  if (!Array.isArray(value)) options.push(fc.array(fc.integer(), { maxLength: 3 }))
  if (typeof value !== 'object' || value === null || Array.isArray(value)) options.push(fc.constant({ nested: { deeper: [1] } }))
  return fc.oneof(...options)
}

/** Bodies that must be refused, derived from a valid one. */
function invalidBody(valid: unknown): fc.Arbitrary<{ kind: string; payload: Buffer }> {
  const text = JSON.stringify(valid)
  const json = (v: unknown) => Buffer.from(JSON.stringify(v))
  const kinds: fc.Arbitrary<{ kind: string; payload: Buffer }>[] = [
    // Raw invalid bytes inside a string of the valid body.
    fc.tuple(fc.constantFrom(...INVALID_UTF8), fc.nat()).map(([bytes, at]) => {
      const quotes = [...text.matchAll(/"/g)].map((m) => m.index)
      const cut = quotes[at % quotes.length]! + 1
      return {
        kind: `invalid UTF-8 ${Buffer.from(bytes).toString('hex')}`,
        payload: Buffer.concat([Buffer.from(text.slice(0, cut)), Buffer.from(bytes), Buffer.from(text.slice(cut))]),
      }
    }),
    // Truncated: every proper prefix of an object or array is incomplete JSON (the empty prefix is
    // no body at all, which the per-log append takes as an empty event: docs/decisions.md).
    fc.integer({ min: 1, max: text.length - 1 }).map((n) => ({ kind: `truncated at ${n}`, payload: Buffer.from(text.slice(0, n)) })),
    fc
      .constantFrom(
        '['.repeat(5000) + ']'.repeat(5000),
        `{"a":${'{"a":'.repeat(3000)}1${'}'.repeat(3001)}`,
        '{"a":1,"a":1}',
        '{"a":1}{"b":2}',
        '\ufeff{}',
        '{"\\ud800":1}',
        'NaN',
        '{"a":1e999999}',
        '"string"',
        '12',
        'true',
      )
      .map((raw) => ({ kind: `odd JSON ${raw.slice(0, 20)}`, payload: Buffer.from(raw) })),
  ]
  if (typeof valid === 'object' && valid !== null && !Array.isArray(valid)) {
    const fields = Object.keys(valid)
    // Fields whose valid value is a string (before/after/details take any JSON value or object).
    const textFields = fields.filter((f) => typeof (valid as Record<string, unknown>)[f] === 'string')
    kinds.push(
      fc.constantFrom(...textFields).chain((field) =>
        wrongTypeFor((valid as Record<string, unknown>)[field]).map((v) => ({
          kind: `wrong type for ${field}`,
          payload: json({ ...valid, [field]: v }),
        })),
      ),
      fc
        .constantFrom('__proto__', 'constructor', 'prototype', 'isAdmin', 'userId', 'RecordID', 'digest')
        .map((key) => ({ kind: `extra field ${key}`, payload: Buffer.from(`${text.slice(0, -1)},"${key}":{"polluted":true}}`) })),
      fc.constantFrom(...fields).map((field) => ({ kind: `huge ${field}`, payload: json({ ...valid, [field]: 'x'.repeat(1_100_000) }) })),
    )
  } else if (Array.isArray(valid)) {
    kinds.push(
      fc
        .oneof(
          fc.integer(),
          fc.string(),
          fc.constant({ rows: valid }),
          fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant([1])), { minLength: 1, maxLength: 3 }),
        )
        .map((v) => ({ kind: 'wrong shape', payload: json(v) })),
    )
  }
  return fc.oneof(...kinds)
}

const TRAVERSAL = [
  '..',
  '../sensors',
  '..%2fsensors',
  '%2e%2e%2fsensors',
  'sensors%2f..%2fmeters',
  '....//',
  '%252e%252e',
  'sensors%00',
  '%c0%ae%c0%ae',
  '~',
  '*',
  "sensors' OR '1'='1",
  '\\..\\',
  'con',
  'sensors;meters',
]

for (const backend of BACKENDS) {
  describe(`${backend}: refused writes change no stored data`, () => {
    let server: TestServer
    let db: RawDatabase
    let admin: string
    let viewer: string
    let before0: TableSnapshot
    let writes: Write[]
    let portalAdmin: PortalClient
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(10))
      admin = await server.token('admin')
      viewer = await server.token('viewer')
      // Data the refused writes could reach: an event chain and a pending correction.
      const event = { ScopeKey: 'seed', entityType: 'batch', entityId: 'B-1', actionType: 'created' }
      assert.equal((await server.api('POST', '/oi-api/provenance/events', { token: admin, body: event })).status, 200)
      const correction = {
        ScopeKey: 'seed',
        entityType: 'lab-result',
        entityId: 'LR-1',
        reasonCategory: 'data-entry-error',
        reason: 'typo',
        before: { ph: 7.9 },
        after: { ph: 7.1 },
      }
      const created = await server.api('POST', '/oi-api/provenance/amendments', { token: admin, body: correction })
      assert.equal(created.status, 200, created.text)
      const id = String(created.body.id ?? created.body.amendmentId ?? created.body.Id)
      const { ScopeKey: _scope, ...withoutScope } = correction
      writes = [
        {
          method: 'POST',
          template: '/ingest/data-connections/{lookup}',
          path: '/oi-api/ingest/data-connections/sensors',
          body: sensorRows(2, Date.parse('2026-03-01T00:00:00Z')),
          right: 'ingest:write',
        },
        { method: 'POST', template: '/provenance/events', path: '/oi-api/provenance/events', body: event, right: 'provenance:append' },
        {
          method: 'POST',
          template: '/audit-logs/{lookup}/events',
          path: '/oi-api/audit-logs/seed/events',
          body: { entityType: 'batch', entityId: 'B-2', actionType: 'moved' },
          right: 'provenance:append',
        },
        {
          method: 'POST',
          template: '/provenance/amendments',
          path: '/oi-api/provenance/amendments',
          body: { ...correction, entityId: 'LR-2' },
          right: 'amendments:create',
        },
        {
          method: 'POST',
          template: '/amendment-logs/{lookup}/amendments',
          path: '/oi-api/amendment-logs/seed/amendments',
          body: { ...withoutScope, entityId: 'LR-3' },
          right: 'amendments:create',
        },
        {
          method: 'POST',
          template: '/provenance/amendments/{id}/approve',
          path: `/oi-api/provenance/amendments/${id}/approve?scopeKey=seed`,
          body: { comment: 'checked' },
          right: 'amendments:approve',
        },
        {
          method: 'POST',
          template: '/provenance/amendments/{id}/reject',
          path: `/oi-api/provenance/amendments/${id}/reject?scopeKey=seed`,
          body: { reason: 'wrong' },
          right: 'amendments:approve',
        },
        {
          method: 'POST',
          template: '/downloads/data-connections/{lookup}',
          path: '/oi-api/downloads/data-connections/sensors',
          body: { format: 'csv', ...WINDOW },
          right: 'exports:create',
        },
        {
          method: 'POST',
          template: '/downloads/surfaces/{surface}',
          path: '/oi-api/downloads/surfaces/hall',
          body: { format: 'jsonl', ...WINDOW },
          right: 'exports:create',
        },
      ]
      // Signing in is a write of its own: done before the snapshot.
      portalAdmin = await signedIn(server, 'admin')
      db = await openRawDatabase(server)
      before0 = await snapshotTables(db)
    })
    after(async () => {
      await db.close()
      await server.stop()
    })

    it('covers every write operation of the OpenAPI description', async () => {
      const doc = (await server.api('GET', '/oi-api/openapi', { token: admin })).body as { paths: Record<string, Record<string, unknown>> }
      const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods)
          .filter((m) => m !== 'get')
          .map((m) => `${m.toUpperCase()} ${path.replace('/oi-api', '')}`),
      )
      // Reads sent as POST (queries, verify), the MCP endpoint (below) and the amendment-log approvals
      // (the same service as /provenance/amendments/{id}/…) are the rest.
      const reads = [
        'POST /warm-queries',
        'POST /provenance/events/verify',
        'POST /audit-logs/{lookup}/events/verify',
        'POST /mcp',
        'DELETE /mcp',
      ]
      const covered = new Set([
        ...writes.map((w) => `${w.method} ${w.template}`),
        ...reads,
        'POST /amendment-logs/{lookup}/amendments/{id}/approve',
        'POST /amendment-logs/{lookup}/amendments/{id}/reject',
        'POST /downloads/surfaces/{surface}/connection/{connection}',
      ])
      assert.deepEqual(
        documented.filter((op) => !covered.has(op)),
        [],
      )
    })

    it('a valid write without a token is 401, and with a token lacking the right is 403', async () => {
      for (const write of writes) {
        const body = JSON.stringify(write.body)
        assertRefused(
          `${write.template} without a token`,
          await sendRaw(server.baseUrl, write.method, write.path, { 'content-type': 'application/json' }, body),
        )
        const forbidden = await sendRaw(
          server.baseUrl,
          write.method,
          write.path,
          { 'content-type': 'application/json', authorization: `Bearer ${viewer}` },
          body,
        )
        assert.equal(forbidden.status, 403, `${write.template} as viewer: ${forbidden.text}`)
        assert.match(forbidden.text, new RegExp(write.right))
      }
    })

    it('malformed bodies (raw invalid UTF-8, truncated JSON, wrong types, deep nesting, huge and extra fields) are refused', async () => {
      for (const write of writes) {
        await fc.assert(
          fc.asyncProperty(
            invalidBody(write.body),
            fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/vnd.api+json'),
            async ({ kind, payload }, contentType) => {
              assertRefused(
                `${write.template} ${kind}`,
                await sendRaw(
                  server.baseUrl,
                  write.method,
                  write.path,
                  { 'content-type': contentType, authorization: `Bearer ${admin}` },
                  payload,
                ),
              )
            },
          ),
          { numRuns: RUNS },
        )
        // Valid JSON under a content type the route does not take.
        for (const contentType of [
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          '',
        ]) {
          assertRefused(
            `${write.template} as ${contentType}`,
            await sendRaw(
              server.baseUrl,
              write.method,
              write.path,
              { 'content-type': contentType, authorization: `Bearer ${admin}` },
              JSON.stringify(write.body),
            ),
          )
        }
      }
    })

    it('ingest as NDJSON: raw invalid UTF-8 is refused, never stored as U+FFFD', async () => {
      const line = (sensor: Buffer) =>
        Buffer.concat([Buffer.from('{"timestamp":"2026-04-01T00:00:00Z","sensor":"'), sensor, Buffer.from('","value":1}\n')])
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...INVALID_UTF8),
          fc.constantFrom('application/x-ndjson', 'text/plain', 'text/csv'),
          async (bytes, contentType) => {
            const answer = await sendRaw(
              server.baseUrl,
              'POST',
              '/oi-api/ingest/data-connections/sensors',
              { 'content-type': contentType, authorization: `Bearer ${admin}` },
              Buffer.concat([line(Buffer.from('ok')), line(Buffer.from(bytes))]),
            )
            assertRefused(`NDJSON with ${Buffer.from(bytes).toString('hex')} as ${contentType}`, answer)
            assert.match(answer.text, /not valid UTF-8 \(at byte \d+\)/)
          },
        ),
        { numRuns: RUNS * 2 },
      )
    })

    it('path traversal and injection in lookups, ScopeKeys and ids reach no other record', async () => {
      for (const write of writes.filter((w) => w.template.includes('{'))) {
        // A ScopeKey is a name, not a path: `../seed` is a key of its own (test/security/injection.test.ts
        // shows it reaches no other chain). Only keys that are not valid ScopeKeys must be refused here.
        const scopeKeyLookup = write.template.startsWith('/audit-logs/') || write.template.startsWith('/amendment-logs/')
        for (const odd of scopeKeyLookup ? ['%00', 'a%0ab', '%1b', 'x'.repeat(201), '%7f'] : TRAVERSAL) {
          const path = write.path.replace(
            /\/(sensors|seed|hall|[0-9a-z_-]+)(\/(approve|reject|events|amendments))?(\?.*)?$/,
            (_m, _seg, rest = '', _x, query = '') => `/${odd}${rest}${query}`,
          )
          const answer = await sendRaw(
            server.baseUrl,
            write.method,
            path,
            { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
            JSON.stringify(write.body),
          )
          assertRefused(`${write.method} ${path}`, answer)
        }
      }
      for (const scopeKey of ['', '\u0000', 'a\nb', 'x'.repeat(201), 'seed\u0007', '\u007f']) {
        assertRefused(
          `ScopeKey ${JSON.stringify(scopeKey).slice(0, 20)}`,
          await sendRaw(
            server.baseUrl,
            'POST',
            '/oi-api/provenance/events',
            { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
            JSON.stringify({ ScopeKey: scopeKey, entityType: 'x' }),
          ),
        )
      }
    })

    it("the portal's forms: sign-in and token creation with and without CSRF, random fields", async () => {
      const portalOk = (what: string, status: number) => assert.ok(status < 500, `${what}: ${status}`)
      // Sign-in: without the form's nonce, with it but wrong credentials, with odd field values.
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            account: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('admin@acme', "admin@acme' --", 'x'.repeat(10_000), '\u0000')),
            password: fc.oneof(fc.string({ maxLength: 30 }), fc.constant('y'.repeat(100_000))),
            next: fc.constantFrom(
              '/portal/',
              'https://evil.example/',
              '//evil.example',
              '/portal/../oi-api/openapi',
              'javascript:alert(1)',
            ),
          }),
          fc.boolean(),
          async (form, withNonce) => {
            const client = new PortalClient(server.baseUrl)
            if (withNonce) await client.get('/portal/sign-in')
            const answer = await client.post('/portal/sign-in', form, withNonce ? {} : { omitCsrf: true })
            portalOk('sign-in', answer.status)
            assert.notEqual(answer.status, 303, `signed in with ${JSON.stringify(form).slice(0, 100)}`)
            assert.ok(![...client.cookies.keys()].some((k) => k.includes('session')), 'no session cookie')
          },
        ),
        { numRuns: RUNS * 2 },
      )
      // Token creation: a signed-in admin, forms without the CSRF token, with another one, and with it
      // but with a lifetime or rights that must be refused.
      const client = portalAdmin
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            name: fc.oneof(fc.string({ maxLength: 40 }), fc.constant('<script>alert(1)</script>'), fc.constant('n'.repeat(20_000))),
            expires: fc.constantFrom('0m', '14m', '31d', '1y', '-1h', 'custom', 'NaN', ''),
            customExpires: fc.constantFrom('', '1s', '10000d', '1e9', "1h' --"),
            rights: fc.array(fc.constantFrom('accounts:manage', 'config:apply', 'root', '', 'queries:run\u0000'), { maxLength: 3 }),
          }),
          fc.constantFrom('none', 'forged', 'valid'),
          async (form, csrf) => {
            const fields: Record<string, string | string[]> = { ...form }
            const answer = await client.post(
              '/portal/api-keys',
              csrf === 'valid' ? fields : csrf === 'forged' ? { ...fields, _csrf: 'A'.repeat(43) } : fields,
              csrf === 'none' ? { omitCsrf: true } : {},
            )
            portalOk('token create', answer.status)
            assert.ok(answer.status >= 400, `token form accepted (${answer.status}) with ${JSON.stringify(form).slice(0, 200)}`)
            // Without this session's CSRF token: 403; a NUL in a field is refused first, as unreadable (400).
            if (csrf !== 'valid') assert.equal(answer.status, JSON.stringify(form).includes('\\u0000') ? 400 : 403)
            if (answer.text.includes('name="_csrf"')) await client.get('/portal/api-keys')
          },
        ),
        { numRuns: RUNS * 2 },
      )
    })

    it('MCP: random JSON-RPC bodies and tool calls with wrong argument types', async () => {
      const tools = [
        'propose_change',
        'run_kql',
        'run_warm_query',
        'get_warm_query',
        'get_proposal',
        'list_proposals',
        'list_warm_queries',
        'nope',
        '../admin',
      ]
      const message = fc.oneof(
        fc.record(
          {
            jsonrpc: fc.constantFrom('2.0', '1.0', 2),
            id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.constant({})),
            method: fc.oneof(
              fc.constantFrom(
                'initialize',
                'tools/list',
                'tools/call',
                'resources/read',
                'prompts/get',
                'ping',
                'notifications/initialized',
                '__proto__',
                'rpc.discover',
              ),
              fc.string(),
            ),
            params: fc.jsonValue({ maxDepth: 3 }),
          },
          { requiredKeys: [] },
        ),
        fc
          .record({
            name: fc.constantFrom(...tools),
            arguments: fc.dictionary(
              fc.constantFrom('kind', 'lookup', 'query', 'title', 'description', 'document', 'id', 'parameters', 'maxRows'),
              fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }), fc.constant({ $ref: '#' })),
            ),
          })
          .map((params) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params })),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      )
      await fc.assert(
        fc.asyncProperty(message, async (body) => {
          const answer = await sendRaw(
            server.baseUrl,
            'POST',
            '/oi-api/mcp',
            { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${admin}` },
            JSON.stringify(body),
          )
          assert.ok(answer.status < 500, `${answer.status} ${answer.text.slice(0, 300)} for ${JSON.stringify(body).slice(0, 200)}`)
          if (answer.status >= 400) {
            const parsed = JSON.parse(answer.text) as { HasError?: boolean; jsonrpc?: string }
            assert.ok(parsed.HasError === true || parsed.jsonrpc === '2.0', answer.text.slice(0, 200))
          }
          if (answer.status === 200 && answer.text.includes('"result"')) {
            assert.ok(
              !/"isError":false/.test(answer.text) ||
                !(body as { method?: string }).method?.startsWith('tools/call') ||
                !JSON.stringify(body).includes('propose_change'),
              `a proposal was accepted from ${JSON.stringify(body).slice(0, 200)}`,
            )
          }
        }),
        { numRuns: RUNS * 4 },
      )
    })

    it('afterwards every table holds what it held before, the chains verify, and the server answers', async () => {
      const differences = snapshotDifferences(before0, await snapshotTables(db))
      assert.deepEqual(differences, [])
      for (const body of [{}, { ScopeKey: 'seed' }]) {
        const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token: admin, body })
        assert.equal(verdict.status, 200, verdict.text)
        assert.equal(verdict.body.ChainValid, true, verdict.text)
      }
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200)
    })
  })
}
