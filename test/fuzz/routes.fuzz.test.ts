/**
 * Bad input never crashes the server and never changes data (issue 10, item 4): every operation of
 * the OpenAPI description receives random and malformed input — wrong types, huge and deeply nested
 * values, path traversal in path parameters, odd headers, invalid UTF-8, broken JSON. Every answer
 * is a 4xx in the error envelope (or a 2xx for a read that happened to be valid); never a 5xx.
 * Invalid writes leave the stored data as it was.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { sendRaw } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

type Operation = { method: string; path: string; parameters: { name: string; in: string }[]; hasBody: boolean }

const RUNS = Number(process.env['PROVENANT_FUZZ_RUNS'] ?? 12)

const nasty = fc.oneof(
  fc.constantFrom(
    '../../etc/passwd',
    '..%2f..%2fetc%2fpasswd',
    '%00',
    '\u0000',
    'null',
    'undefined',
    '-1',
    '0',
    '1e309',
    'NaN',
    '000000000001',
    ' ',
    '%',
    '%zz',
    '😀',
    'a'.repeat(5000),
    '<script>',
    "' OR 1=1 --",
    '"; DROP TABLE workspaces; --',
  ),
  fc.string({ maxLength: 40 }),
  fc.integer().map(String),
)

/** Raw bodies: broken JSON, wrong shapes, huge and deep values. */
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '',
    '{',
    '[',
    '{"a":',
    'null',
    'true',
    '"x"',
    '{"a":1,"a":2}',
    '{"n": 123456789012345678901234567890}',
    '{"s": "\\ud800"}',
    '['.repeat(200) + ']'.repeat(200),
    `{"x": "${'y'.repeat(200_000)}"}`,
    `[${'1,'.repeat(50_000)}1]`,
  ),
  fc
    .dictionary(
      fc.constantFrom(
        'Query',
        'ScopeKey',
        'RecordID',
        'format',
        'from',
        'to',
        'pageSize',
        'page',
        'reason',
        'before',
        'after',
        'entityType',
        'entityId',
        'userId',
        'timestamp',
      ),
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), nasty),
    )
    .map((v) => JSON.stringify(v)),
)

function fill(path: string, values: string[]): string {
  let i = 0
  return path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[i++ % Math.max(1, values.length)] ?? 'x'))
}

/** What an error body must never hold: a stack frame, a file system path, a module path. */
const INTERNALS = /\bat [^ ]+ \(|\.(ts|js):\d+|node_modules|\/(work|home|tmp|usr|var)\/|provenant\.db|SQLITE_|syntax error at or near/

function assertEnvelopeOr2xx(op: string, response: { status: number; text: string; contentType: string }, secret?: string): void {
  assert.ok(response.status < 500, `${op} answered ${response.status}: ${response.text.slice(0, 300)}`)
  if (response.status >= 400) {
    assert.doesNotMatch(response.text, INTERNALS, `${op}: the error body shows internals`)
    if (secret) assert.ok(!response.text.includes(secret), `${op}: the error body echoes the token`)
  }
  if (response.status >= 400 && response.status !== 405) {
    const parsed = JSON.parse(response.text) as {
      HasError?: boolean
      Messages?: { Error?: string }
      jsonrpc?: string
      error?: { code?: number }
    }
    // The MCP endpoint answers malformed JSON-RPC as JSON-RPC errors, as MCP clients expect.
    if (op.includes(' /oi-api/mcp') && parsed.jsonrpc === '2.0' && typeof parsed.error?.code === 'number') return
    assert.equal(parsed.HasError, true, `${op}: ${response.text.slice(0, 200)}`)
    assert.equal(typeof parsed.Messages?.Error, 'string')
  }
}

for (const backend of BACKENDS) {
  describe(`${backend}: fuzzing every operation`, () => {
    let server: TestServer
    let operations: Operation[]
    let token: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(20))
      token = await server.token('admin')
      const doc = (await server.api('GET', '/oi-api/openapi', { token })).body as {
        paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>>
      }
      operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          parameters: op.parameters ?? [],
          hasBody: op.requestBody !== undefined,
        })),
      )
    })
    after(() => server.stop())

    it('finds the operations to fuzz', () => assert.ok(operations.length >= 10, `${operations.length} operations`))

    it('never answers 5xx to random path, query, header and body input', async () => {
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(
            fc.array(nasty, { minLength: 1, maxLength: 3 }),
            fc.dictionary(
              fc.oneof(
                fc.constantFrom(...op.parameters.filter((p) => p.in === 'query').map((p) => p.name), 'x'),
                fc.string({ maxLength: 8 }),
              ),
              nasty,
              { maxKeys: 4 },
            ),
            body,
            fc.constantFrom('application/json', 'application/x-ndjson', 'text/plain', 'application/xml', 'multipart/form-data; boundary=x'),
            fc.boolean(),
            async (pathValues, query, payload, contentType, authenticated) => {
              const search = new URLSearchParams(query).toString()
              const path = `${fill(op.path, pathValues)}${search ? `?${search}` : ''}`
              const headers: Record<string, string> = { 'content-type': contentType, 'x-request-id': 'fuzz' }
              if (authenticated) headers['authorization'] = `Bearer ${token}`
              const response = await sendRaw(server.baseUrl, op.method, path, headers, op.method === 'GET' ? undefined : payload)
              assertEnvelopeOr2xx(`${op.method} ${path.slice(0, 200)}`, response, token)
            },
          ),
          { numRuns: RUNS },
        )
      }
    })

    it('refuses invalid UTF-8, abusive headers and oversized bodies with a 4xx', async () => {
      const write = operations.filter((o) => o.method === 'POST' && !o.path.includes('{'))
      for (const op of write) {
        const invalidUtf8 = Buffer.concat([Buffer.from('{"Query":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])
        assertEnvelopeOr2xx(
          `${op.method} ${op.path} invalid UTF-8`,
          await sendRaw(
            server.baseUrl,
            op.method,
            op.path,
            { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            invalidUtf8,
          ),
        )
        // Oversized bodies (declared and streamed, with the RSS check) are in transport.fuzz.test.ts;
        // here a body just over the 1 MiB limit, sent whole.
        const oversized = await sendRaw(
          server.baseUrl,
          op.method,
          op.path,
          { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          `{"x":"${'a'.repeat(1024 * 1024 + 10)}"}`,
        ).catch((error: Error) => error)
        if (oversized instanceof Error) assert.match(oversized.message, /socket hang up|ECONNRESET|EPIPE/)
        else assertEnvelopeOr2xx(`${op.method} ${op.path} oversized`, oversized)
      }
      for (const authorization of [
        'Bearer ' + 'a'.repeat(20_000),
        'Bearer a.b.c',
        'bearer',
        'Basic dXNlcjpwYXNz',
        `Bearer ${token}.x`,
        `Bearer ${token.slice(0, -2)}`,
      ]) {
        const response = await sendRaw(server.baseUrl, 'GET', '/oi-api/openapi', { authorization })
        assert.ok([400, 401].includes(response.status), `${authorization.slice(0, 30)} → ${response.status}`)
        assertEnvelopeOr2xx('GET /oi-api/openapi with an odd Authorization header', response)
      }
    })

    it('is still healthy, and invalid writes changed no data', async () => {
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200)
      const answer = await server.api('POST', '/oi-api/warm-queries', { token, body: { Query: 'Sensors | count' } })
      assert.equal(answer.status, 200)
      assert.ok(answer.body.results[0].Count >= 20)
    })
  })
}
