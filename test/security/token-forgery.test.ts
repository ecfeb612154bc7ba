/**
 * Security review, tokens (docs/security.md §1): what test/http/authentication.test.ts does not
 * already prove. Algorithm confusion beyond `none`/HS256 (RS256, ES256, PS256 under the server's
 * `kid`), header tricks (`kid` injection, an embedded `jwk`, `crit`), a token that is not yet valid,
 * cross-workspace use (a real token's `wks` swapped, a workspace's data unreachable from another's
 * token), and rights narrowing against a payload that claims more than the stored token and the
 * account (signed with the server's own key, so only the server-side narrowing can refuse it).
 */
import assert from 'node:assert/strict'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { SignJWT } from 'jose'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { claimsOf, serverPrivateKey, signWith } from '../support/forge.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const ROUTE = '/oi-api/provenance/reason-categories'
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A token with the real claims, signed by `key` under `alg` and the header given. */
async function signAs(
  alg: string,
  key: KeyObject | Uint8Array,
  claims: Record<string, unknown>,
  header: Record<string, unknown>,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ ...claims })
    .setProtectedHeader({ ...header, alg })
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(key)
}

for (const backend of BACKENDS) {
  describe(`${backend}: token forgery and confusion (security review)`, () => {
    let server: TestServer
    let valid: string
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(3))
      valid = await server.token('analyst')
    })
    after(() => server.stop())

    async function expect401(token: string, message: RegExp, route = ROUTE): Promise<void> {
      const response = await server.api('GET', route, { headers: { authorization: `Bearer ${token}` }, unchecked: true })
      assert.equal(response.status, 401, response.text)
      assert.match(errorMessage(response), message)
      assert.ok(!response.text.includes(token), 'the answer never echoes the token')
    }

    it("401: RS256, ES256 and PS256 tokens under the server's kid (asymmetric algorithm swap)", async () => {
      const { kid, ...claims } = claimsOf(valid)
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
      await expect401(await signAs('RS256', rsa, claims, { kid, typ: 'at+jwt' }), /algorithm RS256 is not accepted/)
      await expect401(await signAs('PS256', rsa, claims, { kid, typ: 'at+jwt' }), /algorithm PS256 is not accepted/)
      await expect401(await signAs('ES256', ec, claims, { kid, typ: 'at+jwt' }), /algorithm ES256 is not accepted/)
      // EdDSA by name but another key embedded in the header: the key comes from the keyring only.
      const foreign = generateKeyPairSync('ed25519')
      const jwk = foreign.publicKey.export({ format: 'jwk' })
      await expect401(await signAs('EdDSA', foreign.privateKey, claims, { kid, typ: 'at+jwt', jwk }), /signature is invalid/)
      await expect401(await signAs('EdDSA', foreign.privateKey, claims, { typ: 'at+jwt', jwk }), /key this server does not know/)
    })

    it('401: header tricks — kid injection, unknown critical headers, a header that is not JSON', async () => {
      const { kid, ...claims } = claimsOf(valid)
      const key = serverPrivateKey(server.config.dataDir)
      for (const odd of ["' OR '1'='1", '../../keys/jwt-0.pem', `${kid}\u0000`, 'x'.repeat(5000)]) {
        await expect401(await signWith(key, claims, odd), /key this server does not know/)
      }
      const withCrit = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: 'EdDSA', kid, crit: ['x-provenant'], 'x-provenant': 1 } as never)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(key)
        .catch(() => undefined)
      if (withCrit) await expect401(withCrit, /could not be verified|not valid/)
      const [, payload, signature] = valid.split('.')
      await expect401(`${Buffer.from('{"alg":"EdDSA",').toString('base64url')}.${payload}.${signature}`, /not a well-formed JWT/)
      await expect401(`${b64({ alg: ['EdDSA'], kid })}.${payload}.${signature}`, /not accepted/)
    })

    it("401: a token that is not yet valid (nbf or iat in the future), even signed with the server's key", async () => {
      const { kid, ...claims } = claimsOf(valid)
      const key = serverPrivateKey(server.config.dataDir)
      const now = Math.floor(Date.now() / 1000)
      const notBefore = await new SignJWT({ wks: claims.wks, rights: claims.rights, name: 'forged' })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
        .setJti(claims.jti)
        .setSubject(claims.sub)
        .setAudience(claims.aud)
        .setIssuedAt(now)
        .setNotBefore(now + 3600)
        .setExpirationTime(now + 7200)
        .sign(key)
      await expect401(notBefore, /nbf claim/)
      await expect401(await signWith(key, { ...claims, iat: now + 3600, exp: now + 7200 }), /not yet valid|iat claim/)
    })

    it('401: a real token whose payload names another workspace or account (tampered, or re-signed)', async () => {
      const other = await server.services.admin.createWorkspace(`forge-${backend}`)
      const claims = claimsOf(valid)
      const [h, , s] = valid.split('.')
      // Tampered without re-signing: the signature no longer matches.
      await expect401(`${h}.${b64({ ...claims, wks: other.id })}.${s}`, /signature is invalid/)
      // Even with the server's key, the stored token binds its workspace and owner.
      const key = serverPrivateKey(server.config.dataDir)
      await expect401(await signWith(key, { ...claims, wks: other.id }), /not known to this server/)
      await expect401(await signWith(key, { ...claims, sub: server.accounts.admin.id }), /not known to this server/)
    })

    it("cross-workspace: another workspace's token reaches none of this workspace's data, by any path", async () => {
      const other = await server.services.admin.createWorkspace(`neighbour-${backend}`)
      const owner = await server.services.admin.addAccount({ name: `neighbour-${backend}`, role: 'admin', workspaceId: other.id })
      const theirs = await server.token(owner, { workspaceId: other.id })
      assert.equal((await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: await server.token('admin') })).status, 200)
      const lookup = await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: theirs })
      assert.equal(lookup.status, 404, lookup.text)
      const query = await server.api('POST', '/oi-api/warm-queries', { token: theirs, body: { Query: 'Sensors | count' } })
      assert.equal(query.status, 400)
      assert.match(errorMessage(query), /unknown table 'Sensors'/)
      const ingest = await server.api('POST', '/oi-api/ingest/data-connections/sensors', { token: theirs, body: sensorRows(1) })
      assert.equal(ingest.status, 404, ingest.text)
      const exported = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
        token: theirs,
        body: { format: 'csv', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
      })
      assert.equal(exported.status, 404, exported.text)
      const log = await server.api('GET', '/oi-api/provenance/events/query', { token: theirs })
      assert.equal(log.status, 200)
      assert.ok(
        log.body.results.every((r: { userId: string }) => r.userId === owner.id),
        "only the neighbour's own calls",
      )
    })

    it("rights narrowing: a payload claiming more rights (re-signed with the server's key) gets only the stored token's rights within the role", async () => {
      const narrow = await server.token('analyst', { rights: ['warm-queries:read'] })
      const claims = claimsOf(narrow)
      const key = serverPrivateKey(server.config.dataDir)
      // More than the stored token (queries:run is the analyst's) and more than the role (amendments:approve).
      const inflated = await signWith(key, {
        ...claims,
        rights: ['warm-queries:read', 'queries:run', 'amendments:approve', 'amendments:read', 'accounts:manage'],
      })
      assert.equal(
        (await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: inflated })).status,
        200,
        'the token itself is genuine',
      )
      const run = await server.api('POST', '/oi-api/warm-queries', { token: inflated, body: { Query: 'Sensors | count' } })
      assert.equal(run.status, 403, run.text)
      assert.match(errorMessage(run), /lacks the right queries:run/)
      const read = await server.api('GET', ROUTE, { token: inflated })
      assert.equal(read.status, 403)
      // A full-rights analyst token claiming an approver's right still cannot approve.
      const full = claimsOf(valid)
      const escalated = await signWith(key, { ...full, rights: [...full.rights, 'amendments:approve'] })
      const approve = await server.api('POST', '/oi-api/provenance/amendments/1/approve', { token: escalated, body: {}, unchecked: true })
      assert.equal(approve.status, 403, approve.text)
    })
  })
}
