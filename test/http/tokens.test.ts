/**
 * Spec 5.3, 5.4, 5.8 and design §6: token lifetimes, rights never beyond the owner's, revocation
 * in every process, and workspace isolation.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS, createTestDatabase } from '../support/backends.js'
import { claimsOf } from '../support/forge.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const ROUTE = '/oi-api/provenance/reason-categories'

for (const backend of BACKENDS) {
  describe(`${backend}: tokens (spec 5)`, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer(backend)
    })
    after(() => server.stop())

    it('accepts every listed expiry and custom durations at the bounds', async () => {
      for (const [expires, ms] of [
        ['15m', 900_000],
        ['1h', 3_600_000],
        ['8h', 28_800_000],
        ['24h', 86_400_000],
        ['7d', 604_800_000],
        ['30d', 2_592_000_000],
        ['900', 900_000],
        ['2d12h', 216_000_000],
      ] as const) {
        const token = await server.token('analyst', { expires })
        const claims = claimsOf(token)
        assert.equal((claims.exp! - claims.iat!) * 1000, ms, expires)
        assert.equal((await server.api('GET', ROUTE, { token })).status, 200)
      }
    })

    it('refuses lifetimes outside 15 minutes to 30 days, and non-durations', async () => {
      for (const expires of ['14m59s', '30d1s', '0m', '899', '31d', 'forever', '1y', '']) {
        await assert.rejects(
          server.token('analyst', { expires }),
          (error: Error) => /between 15 minutes and 30 days|is not a duration/.test(error.message),
          expires,
        )
      }
    })

    it('narrows to a requested subset and never exceeds the owner', async () => {
      const narrow = await server.token('analyst', { rights: ['warm-queries:read', 'amendments:read'] })
      assert.deepEqual(claimsOf(narrow).rights, ['warm-queries:read', 'amendments:read'])
      await assert.rejects(
        server.token('viewer', { rights: ['queries:run'] }),
        /cannot exceed its owner's rights: the viewer role .* does not include queries:run/,
      )
      await assert.rejects(
        server.token('analyst', { rights: ['amendments:approve', 'warm-queries:read'] }),
        /does not include amendments:approve/,
      )
      await assert.rejects(server.token('admin', { rights: ['everything'] }), /unknown right everything/)
      await assert.rejects(
        server.token('admin', { rights: ['config:apply'] }),
        /unknown right config:apply/,
        'admin capabilities are never token rights',
      )
    })

    it('effective rights follow the owner: removing a right from the role narrows an existing token', async () => {
      const account = await server.services.admin.addAccount({
        name: `narrowed-${backend}`,
        role: 'analyst',
        workspaceId: server.workspace.id,
      })
      const token = await server.token(account)
      assert.ok(claimsOf(token).rights.includes('amendments:read'))
      assert.equal((await server.api('GET', ROUTE, { token })).status, 200)
      // No role below analyst lacks amendments:read, so remove the membership: the token stops working.
      await server.stores.access.setMembership({ workspaceId: server.workspace.id, accountId: account.id, role: 'viewer' })
      assert.equal((await server.api('GET', ROUTE, { token })).status, 200)
      const doc = (await server.api('GET', '/oi-api/openapi', { token })).body as {
        paths: Record<string, Record<string, { 'x-required-rights': string[] }>>
      }
      for (const methods of Object.values(doc.paths)) {
        for (const op of Object.values(methods))
          assert.ok(!op['x-required-rights'].includes('queries:run'), 'a viewer-owned token never lists queries:run')
      }
    })

    it('lists tokens with metadata only, and revocation is immediate', async () => {
      const token = await server.token('editor')
      const id = claimsOf(token).jti
      const listed = (await server.services.access.listTokens(server.workspace.id, server.accounts.editor.id)).find((t) => t.id === id)
      assert.ok(listed)
      assert.ok(!JSON.stringify(listed).includes(token.split('.')[2]!), 'the token text is never stored')
      await server.services.access.revokeToken(server.workspace.id, id, {
        id: server.accounts.editor.id,
        name: 'editor',
        canRevokeOthers: false,
      })
      assert.equal((await server.api('GET', ROUTE, { token })).status, 401)
      await assert.rejects(
        server.services.access.revokeToken(server.workspace.id, claimsOf(await server.token('admin')).jti, {
          id: server.accounts.editor.id,
          name: 'editor',
          canRevokeOthers: false,
        }),
        /only the owner or an administrator/,
      )
    })

    it('records token creation and revocation as committed workspace changes', async () => {
      const before = await server.stores.changes.latestSeq(server.workspace.id)
      const token = await server.token('analyst')
      await server.services.access.revokeToken(server.workspace.id, claimsOf(token).jti, {
        id: server.accounts.admin.id,
        name: 'admin',
        canRevokeOthers: true,
      })
      const changes = await server.stores.changes.since(server.workspace.id, before, 10)
      assert.deepEqual(
        changes.map((c) => [c.kind, c.action, c.entityId]),
        [
          ['token', 'created', claimsOf(token).jti],
          ['token', 'revoked', claimsOf(token).jti],
        ],
      )
      assert.deepEqual(
        changes.map((c) => c.seq),
        [before + 1, before + 2],
      )
    })

    it('isolates workspaces: a token of one workspace sees only its own configuration', async () => {
      const other = await server.services.admin.createWorkspace(`other-${backend}`)
      const owner = await server.services.admin.addAccount({ name: `owner-${backend}`, role: 'admin', workspaceId: other.id })
      await server.services.config.apply(
        other.id,
        { accountId: owner.id, accountName: owner.name, role: 'admin' },
        { reasonCategories: ['only-in-other'] },
      )
      const mine = await server.api('GET', ROUTE, { token: await server.token('admin') })
      const theirs = await server.api('GET', ROUTE, { token: await server.token(owner, { workspaceId: other.id }) })
      assert.deepEqual(theirs.body.reasonCategories, [{ id: 'only-in-other' }])
      assert.ok(!mine.body.reasonCategories.some((c: { id: string }) => c.id === 'only-in-other'))
      // An account that is not a member of a workspace cannot get a token for it.
      await assert.rejects(server.token('admin', { workspaceId: other.id }), /is not a member of this workspace/)
    })
  })
}

if (BACKENDS.includes('postgres')) {
  describe('postgres: revocation across two processes sharing one database (spec 5.8)', () => {
    it('revoking through one process is refused at once by the other', async () => {
      const database = await createTestDatabase()
      const a = await startTestServer('postgres', { databaseUrl: database.url })
      const b = await startTestServer('postgres', { databaseUrl: database.url })
      try {
        const token = await a.token('analyst')
        assert.equal((await b.api('GET', ROUTE, { token })).status, 200, 'a token minted by A works on B')
        const tokenOfB = await b.token('analyst')
        assert.equal((await a.api('GET', ROUTE, { token: tokenOfB })).status, 200, 'and the other way round (keys are published)')
        await a.services.access.revokeToken(a.workspace.id, claimsOf(token).jti, {
          id: a.accounts.admin.id,
          name: 'admin',
          canRevokeOthers: true,
        })
        const refused = await b.api('GET', ROUTE, { token })
        assert.equal(refused.status, 401)
        assert.match(errorMessage(refused), /revoked/)
      } finally {
        await a.stop()
        await b.stop()
        await database.drop()
      }
    })
  })
}
