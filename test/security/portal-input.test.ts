/**
 * Security review (docs/security.md §5): portal input. A NUL anywhere (URL or form field) is a 400
 * page, never a database error (it was a 500 on PostgreSQL). Where the portal sends a browser after
 * signing in: `next`
 * only ever names a portal page: never another origin (absolute, scheme-relative, backslash, or
 * encoded forms), never a path that a browser resolves out of /portal (dot segments, also
 * percent-encoded), never a header break (a CR/LF in `next` was a 500 before).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PASSWORD, PortalClient, signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: portal input and the sign-in redirect (security review)`, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(backend)
    })
    after(() => server.stop())

    it('never leaves the portal, and never breaks a header', async () => {
      const hostile = [
        'https://evil.example/',
        '//evil.example',
        '/\\evil.example',
        '\\\\evil.example',
        'javascript:alert(1)',
        'http:evil.example',
        '/portal//evil.example',
        '/portal/../../evil',
        '/portal/%2e%2e/%2e%2e/evil',
        '/portal/.%2E/x',
        '/portal/\r\nSet-Cookie: planted=1',
        '/portal/\u2028x',
        '/portalx',
        `/portal/${'a'.repeat(3000)}`,
      ]
      for (const next of hostile) {
        const response = await new PortalClient(server.baseUrl).signIn('admin@acme', PASSWORD('admin'), next)
        assert.equal(response.status, 303, `${JSON.stringify(next)}: ${response.status}`)
        assert.equal(response.location, '/portal/', JSON.stringify(next))
        assert.ok(!response.headers.getSetCookie().some((c) => c.startsWith('planted')))
      }
      for (const next of ['/portal/api-keys', '/portal/warm-queries?path=plant%2Fhall%2Favg', '/portal/?a=1#b']) {
        const response = await new PortalClient(server.baseUrl).signIn('admin@acme', PASSWORD('admin'), next)
        assert.equal(response.location, next, 'a portal page is kept')
      }
    })

    it('a NUL in a portal URL or form field, or a form that is not UTF-8, is a 400 page, never a 500, and changes nothing', async () => {
      const client = await signedIn(server, 'admin')
      const tokens = (await server.services.access.listTokens(server.workspace.id, server.accounts.admin.id)).length
      const answers = [
        await client.get('/portal/warm-queries/%00'),
        await client.get('/portal/api-keys?x=%00'),
        await client.post('/portal/api-keys/%00/revoke', {}),
        await client.post('/portal/api-keys', { name: 'a\u0000b', expires: '1h', rights: 'warm-queries:read' }),
        await client.post('/portal/workspace', { workspace: '\u0000' }),
        await new PortalClient(server.baseUrl).signIn('admin\u0000@acme', PASSWORD('admin')),
      ]
      for (const answer of answers) {
        assert.equal(answer.status, 400, answer.text.slice(0, 200))
        assert.match(answer.headers.get('content-type') ?? '', /text\/html/)
      }
      // Bytes that are not UTF-8, percent-encoded or raw, are refused too (never stored as U+FFFD).
      for (const body of [
        `name=a%FFb&expires=1h&rights=warm-queries%3Aread&_csrf=${client.csrf}`,
        Buffer.concat([
          Buffer.from('name=a'),
          Buffer.from([0xc0, 0xaf]),
          Buffer.from(`&expires=1h&rights=warm-queries%3Aread&_csrf=${client.csrf}`),
        ]),
      ]) {
        const response = await fetch(`${server.baseUrl}/portal/api-keys`, {
          method: 'POST',
          headers: {
            cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body,
          redirect: 'manual',
        })
        assert.equal(response.status, 400)
        assert.match(await response.text(), /not valid UTF-8/)
      }
      assert.equal((await server.services.access.listTokens(server.workspace.id, server.accounts.admin.id)).length, tokens)
      assert.equal((await client.get('/portal/')).status, 200, 'still signed in')
    })
  })
}
