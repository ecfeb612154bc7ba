/**
 * Spec 5 (authentication): every reason a token is not valid is a 401 in the error envelope with
 * a `WWW-Authenticate: Bearer` challenge; a valid token outside its rights is a 403.
 */
import assert from 'node:assert/strict'
import { createPublicKey } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { claimsOf, foreignKey, hs256WithPublicKey, serverPrivateKey, signWith, unsignedToken } from '../support/forge.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const ROUTE = '/oi-api/provenance/reason-categories'

for (const backend of BACKENDS) {
  describe(`${backend}: authentication (spec 5)`, () => {
    let server: TestServer
    let valid: string
    before(async () => {
      server = await startTestServer(backend)
      valid = await server.token('analyst')
    })
    after(() => server.stop())

    async function expect401(authorization: string | undefined, messagePart: RegExp): Promise<void> {
      const response = await server.api('GET', ROUTE, { headers: authorization === undefined ? {} : { authorization } })
      assert.equal(response.status, 401, response.text)
      assert.match(errorMessage(response), messagePart)
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/)
    }

    it('accepts a valid token and reports its expiry in X-Token-Expires-At', async () => {
      const response = await server.api('GET', ROUTE, { token: valid })
      assert.equal(response.status, 200)
      const expires = Date.parse(response.headers.get('x-token-expires-at') ?? '')
      assert.ok(Math.abs(expires - (Date.now() + 3_600_000)) < 120_000, 'expiry about one hour ahead')
      assert.ok(response.headers.get('x-request-id'))
    })

    it('401: missing Authorization header', () => expect401(undefined, /missing Authorization header/))
    it('401: malformed Authorization header', async () => {
      await expect401(`Token ${valid}`, /malformed Authorization header/)
      await expect401('Bearer', /malformed Authorization header/)
      await expect401(`Bearer ${valid} extra`, /malformed Authorization header/)
      await expect401('Bearer not-a-jwt', /not a well-formed JWT/)
    })

    it('401: bad signature', async () => {
      const [h, p, s] = valid.split('.')
      const flipped = `${s!.slice(0, 10)}${s![10] === 'A' ? 'B' : 'A'}${s!.slice(11)}`
      await expect401(`Bearer ${h}.${p}.${flipped}`, /signature is invalid/)
      // A payload edited to claim more rights no longer matches the signature.
      const claims = claimsOf(valid)
      const edited = Buffer.from(JSON.stringify({ ...claims, rights: ['amendments:approve'] })).toString('base64url')
      await expect401(`Bearer ${h}.${edited}.${s}`, /signature is invalid/)
    })

    it('401: a token signed by a key the server does not know', async () => {
      const claims = claimsOf(valid)
      await expect401(`Bearer ${await signWith(foreignKey(), claims)}`, /key this server does not know/)
      // Same kid as the server's key, foreign signature.
      await expect401(`Bearer ${await signWith(foreignKey(), claims, claims.kid)}`, /signature is invalid/)
    })

    it('401: alg none and algorithm confusion (HS256 keyed with the public key)', async () => {
      const claims = claimsOf(valid)
      await expect401(`Bearer ${unsignedToken(claims, claims.kid)}`, /algorithm none is not accepted/)
      const publicPem = createPublicKey(serverPrivateKey(server.config.dataDir)).export({ type: 'spki', format: 'pem' }).toString()
      await expect401(`Bearer ${await hs256WithPublicKey(claims, publicPem, claims.kid)}`, /algorithm HS256 is not accepted/)
    })

    it('401: expired token', async () => {
      const claims = claimsOf(valid)
      const now = Math.floor(Date.now() / 1000)
      const expired = await signWith(serverPrivateKey(server.config.dataDir), { ...claims, iat: now - 7200, exp: now - 60 })
      await expect401(`Bearer ${expired}`, /has expired/)
    })

    it('401: a token for another audience or not issued by this server', async () => {
      const claims = claimsOf(valid)
      const key = serverPrivateKey(server.config.dataDir)
      await expect401(`Bearer ${await signWith(key, { ...claims, aud: 'urn:provenant:someone-else' })}`, /not valid here \(aud claim\)/)
      await expect401(`Bearer ${await signWith(key, { ...claims, jti: 'tok_neverissued' })}`, /not known to this server/)
    })

    it('401: revoked token, at once', async () => {
      const token = await server.token('analyst')
      assert.equal((await server.api('GET', ROUTE, { token })).status, 200)
      await server.services.access.revokeToken(server.workspace.id, claimsOf(token).jti, {
        id: server.accounts.analyst.id,
        name: 'analyst',
        canRevokeOthers: false,
      })
      await expect401(`Bearer ${token}`, /has been revoked/)
    })

    it('401: disabled account', async () => {
      const account = await server.services.admin.addAccount({ name: `temp-${backend}`, role: 'analyst', workspaceId: server.workspace.id })
      const token = await server.token(account)
      assert.equal((await server.api('GET', ROUTE, { token })).status, 200)
      await server.services.admin.setDisabled(account.name, true)
      await expect401(`Bearer ${token}`, /is disabled/)
    })

    it("403: a valid token without the route's right", async () => {
      const token = await server.token('analyst', { rights: ['warm-queries:read'] })
      const response = await server.api('GET', ROUTE, { token })
      assert.equal(response.status, 403)
      assert.match(errorMessage(response), /lacks the right amendments:read/)
    })
  })
}
