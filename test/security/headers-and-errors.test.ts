/**
 * Security review (docs/security.md §6–§8): response headers and error bodies. No answer names the
 * server software or its version; the portal's pages carry the browser security headers (CSP with
 * frame-ancestors, X-Frame-Options, nosniff, Referrer-Policy) on every page including error pages;
 * the MCP endpoint of the real server refuses a foreign Origin; two Authorization headers are
 * refused; error bodies never carry a stack trace, a file path, SQL, or the credential sent.
 */
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { VERSION } from '../../src/version.js'
import { PortalClient, signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { openRawDatabase } from '../support/raw-database.js'
import { snapshotTables } from '../support/table-snapshot.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const INTERNALS =
  /\bat [^ ]+ \(|\.(ts|js):\d+|node_modules|\/(work|home|tmp|usr|var)\/|provenant\.db|SQLITE_|syntax error at or near|SELECT |INSERT INTO/

for (const backend of BACKENDS) {
  describe(`${backend}: response headers and error bodies (security review)`, () => {
    let server: TestServer
    let token: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(5))
      token = await server.token('admin')
    })
    after(() => server.stop())

    it('no answer names the server software or its version (API, errors, health, portal, well-known, downloads)', async () => {
      const exported = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
        token,
        body: { format: 'csv', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
      })
      const download = new URL(exported.body.downloadUrl as string)
      const answers = await Promise.all([
        fetch(`${server.baseUrl}/oi-api/openapi`, { headers: { authorization: `Bearer ${token}` } }),
        fetch(`${server.baseUrl}/oi-api/openapi`),
        fetch(`${server.baseUrl}/oi-api/nope`, { headers: { authorization: `Bearer ${token}` } }),
        fetch(`${server.baseUrl}/healthz`),
        fetch(`${server.baseUrl}/portal/sign-in`),
        fetch(`${server.baseUrl}/portal/nope`),
        fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`),
        fetch(`${server.baseUrl}${download.pathname}${download.search}`),
        fetch(`${server.baseUrl}${download.pathname}?expires=1&signature=x`),
        fetch(`${server.baseUrl}/`),
      ])
      for (const response of answers) {
        await response.arrayBuffer()
        const names = [...response.headers.keys()]
        assert.equal(response.headers.get('x-powered-by'), null, response.url)
        assert.equal(response.headers.get('server'), null, response.url)
        for (const [name, value] of response.headers) {
          assert.ok(
            !/fastify|node|express|provenant\/|\d+\.\d+\.\d+/i.test(`${name}: ${value}`) ||
              name === 'date' ||
              name === 'etag' ||
              name === 'x-token-expires-at' ||
              name === 'content-security-policy',
            `${response.url} ${name}: ${value}`,
          )
          assert.ok(!value.includes(VERSION) || name === 'date', `${name} carries the version`)
        }
        assert.ok(names.length > 0)
      }
    })

    it("every portal page carries CSP (frame-ancestors 'none'), X-Frame-Options, nosniff and Referrer-Policy, error pages included", async () => {
      const client = await signedIn(server, 'viewer')
      const pages = [
        await new PortalClient(server.baseUrl).get('/portal/sign-in'),
        await new PortalClient(server.baseUrl).get('/portal/'),
        await new PortalClient(server.baseUrl).post('/portal/sign-in', { account: 'x', password: 'y' }, { omitCsrf: true }),
        await client.get('/portal/'),
        await client.get('/portal/api-keys'),
        await client.get('/portal/no-such-page'),
        await client.post('/portal/api-keys', { name: 'x', expires: '1h' }, { omitCsrf: true }),
      ]
      for (const page of pages) {
        const csp = page.headers.get('content-security-policy') ?? ''
        assert.match(csp, /frame-ancestors 'none'/, `${page.status} has CSP ${csp}`)
        assert.match(csp, /default-src 'none'/)
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'no inline scripts or wildcards')
        assert.equal(page.headers.get('x-frame-options'), 'DENY')
        assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
        assert.match(page.headers.get('referrer-policy') ?? '', /^(same-origin|no-referrer|strict-origin)/)
        assert.equal(page.headers.get('cache-control'), 'no-store')
      }
    })

    it("the real server's MCP endpoint refuses a foreign Origin with 403 in the envelope, and serves its own", async () => {
      const initialize = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
      })
      const post = (origin?: string) =>
        fetch(`${server.baseUrl}/oi-api/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
            ...(origin ? { origin } : {}),
          },
          body: initialize,
        })
      for (const origin of [
        'https://evil.example',
        'null',
        'http://127.0.0.1.evil.example',
        'file://',
        `${server.config.publicUrl}.evil.example`,
      ]) {
        const response = await post(origin)
        assert.equal(response.status, 403, origin)
        assert.match(((await response.json()) as { Messages: { Error: string } }).Messages.Error, /are not allowed on the MCP endpoint/)
      }
      assert.equal((await post()).status, 200, 'no Origin (a non-browser client)')
      assert.equal((await post(new URL(server.config.publicUrl).origin)).status, 200, "the server's own origin")
    })

    it('two Authorization headers are refused (401), whichever comes first', async () => {
      const { port } = new URL(server.baseUrl)
      for (const pair of [
        [`Bearer ${token}`, 'Bearer nope'],
        ['Bearer nope', `Bearer ${token}`],
        [`Bearer ${token}`, `Bearer ${token}`],
      ]) {
        // fetch would join repeated headers into one; two header lines need a raw request.
        const answer = await new Promise<string>((resolve) => {
          const socket = connect(Number(port), '127.0.0.1')
          let text = ''
          socket.on('data', (c: Buffer) => {
            text += c.toString()
          })
          socket.on('close', () => resolve(text))
          socket.write(
            `GET /oi-api/openapi HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${pair[0]}\r\nAuthorization: ${pair[1]}\r\nConnection: close\r\n\r\n`,
          )
        })
        assert.match(answer, /^HTTP\/1.1 401/, answer.slice(0, 200))
        assert.match(answer, /send exactly one \\"Authorization: Bearer <token>\\"/)
      }
    })

    it("secrets at rest: neither a token's text nor a session cookie is in any table", async () => {
      const client = await signedIn(server, 'analyst')
      const cookie = [...client.cookies.entries()].find(([name]) => name.includes('session'))![1]
      const fresh = await server.token('analyst')
      const db = await openRawDatabase(server)
      try {
        const everything = JSON.stringify(await snapshotTables(db))
        assert.ok(everything.includes('portal_sessions'), 'the snapshot was read')
        assert.ok(!everything.includes(fresh.split('.')[2]!), 'a token signature is stored')
        assert.ok(!everything.includes(cookie), 'a session cookie is stored as is')
        assert.ok((await db.all('SELECT id_hash FROM portal_sessions')).length > 0, 'sessions are stored by hash')
      } finally {
        await db.close()
      }
    })

    it('error bodies never carry a stack trace, a path, SQL or the credential sent', async () => {
      const probes: [string, string, { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }][] = [
        ['GET', '/oi-api/openapi', { headers: { authorization: `Bearer ${token}x` } }],
        ['GET', '/oi-api/openapi', { headers: { authorization: `Bearer ${token.split('.').reverse().join('.')}` } }],
        [
          'GET',
          '/oi-api/openapi',
          { headers: { authorization: `Basic ${Buffer.from('admin@acme:admin-password-123').toString('base64')}` } },
        ],
        ['POST', '/oi-api/warm-queries', { token, rawBody: '{"Query": "Sensors | where sensor == \'x\'", "Query": 1}' }],
        ['POST', '/oi-api/warm-queries', { token, body: { Query: "Sensors | where nope == 'secret-value'" } }],
        ['POST', '/oi-api/warm-queries', { token, body: { Query: "Sensors | extend x = toint('a') / 0 | where x > 'b'" } }],
        ['POST', '/oi-api/warm-queries', { token, body: { Query: 'Sensors | take 99999999999999999999' } }],
        ['POST', '/oi-api/provenance/events', { token, body: { ScopeKey: 'a', details: 'not an object' } }],
        ['POST', '/oi-api/provenance/events/verify', { token, body: { TrustedCheckpoint: 'provenant/x\n1\nAAAA\n\n— forged sig' } }],
        ['GET', '/oi-api/provenance/events/query?startDate=%27%3B--', { token }],
        ['POST', '/oi-api/ingest/data-connections/sensors', { token, body: [{ timestamp: 'never', value: 'x' }] }],
        ['GET', '/oi-api/warm-queries/..%2f..%2fetc%2fpasswd', { token }],
      ]
      for (const [method, path, options] of probes) {
        const response = await server.api(method, path, { ...options, unchecked: true })
        assert.ok(response.status >= 400 && response.status < 500, `${method} ${path}: ${response.status} ${response.text.slice(0, 200)}`)
        const message = errorMessage(response)
        assert.doesNotMatch(message, INTERNALS, `${method} ${path}: ${message}`)
        assert.ok(!response.text.includes(token.split('.')[2]!), `${method} ${path} echoes the token's signature`)
        assert.ok(
          !response.text.includes('admin-password-123') &&
            !response.text.includes(Buffer.from('admin@acme:admin-password-123').toString('base64')),
          'echoes a password',
        )
        assert.ok(!response.text.includes(server.config.dataDir), 'names the data directory')
      }
      // And the server log never holds a bearer token either (call records are checked in call-recording.test.ts).
      assert.ok(!server.logLines.join('\n').includes(token.split('.')[2]!), 'a token reached the log')
    })
  })
}
