/**
 * Issue 9 over real HTTP: portal sign-in and server-side sessions (cookie attributes, fixation,
 * sign-out, idle and absolute expiry, password change, disabled accounts), CSRF on every POST,
 * the sign-in throttle, rights on pages and forged POSTs, no bearer tokens in the portal, sign-in
 * decisions handed to the activity log, and sessions shared by two processes on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach, describe, it } from 'node:test'
import pino from 'pino'
import { loadConfig } from '../../src/config/config.js'
import type { ActivityLog, DecisionInput } from '../../src/domain/activity/activity-log.js'
import { createRuntime } from '../../src/main.js'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS, createTestDatabase } from '../support/backends.js'
import { startTestServer, TEST_SCRYPT, type TestServer } from '../support/test-server.js'
import { PASSWORD, PortalClient, signedIn } from './portal-client.js'

/**
 * Passes every decision on to the real activity log and keeps a copy to assert on. The method is
 * wrapped on the activity log object itself, so every service holding it (the access service, the
 * session service) goes through the wrapper.
 */
function recordDecisions(server: TestServer): DecisionInput[] {
  const seen: DecisionInput[] = []
  const activity = server.services.activity as { recordDecision: ActivityLog['recordDecision'] }
  const original = activity.recordDecision.bind(activity)
  activity.recordDecision = async (input, tx) => {
    seen.push(input)
    await original(input, tx)
  }
  return seen
}

for (const backend of BACKENDS) {
  describe(`${backend}: portal sign-in and sessions (issue 9)`, () => {
    const clock = manualClock(Date.now())
    let server: TestServer
    let decisions: DecisionInput[]
    before(async () => {
      server = await startTestServer(backend, { clock })
      decisions = recordDecisions(server)
    })
    after(() => server.stop())
    beforeEach(() => {
      // Each test starts outside every throttle window.
      clock.advance(60 * 60_000)
    })

    it('sends a signed-out browser to the sign-in page, remembering where it was going', async () => {
      const client = new PortalClient(server.baseUrl)
      for (const root of ['/portal', '/portal/']) {
        const response = await client.get(root)
        assert.equal(response.status, 303)
        assert.equal(response.location, `/portal/sign-in?next=${encodeURIComponent(root)}`)
      }
      const page = await client.get('/portal/warm-queries?x=1')
      assert.equal(page.status, 303)
      assert.equal(page.location, '/portal/sign-in?next=%2Fportal%2Fwarm-queries%3Fx%3D1')
      const form = await client.get(page.location!)
      assert.equal(form.status, 200)
      assert.match(form.text, /<label for="account">Account name<\/label>/)
      assert.match(form.text, /<input type="hidden" name="next" value="\/portal\/warm-queries\?x=1">/)
      // Security headers: nothing external, no framing, never cached.
      assert.match(form.headers.get('content-security-policy')!, /default-src 'none'; script-src 'self'; style-src 'self'/)
      assert.match(form.headers.get('content-security-policy')!, /frame-ancestors 'none'/)
      assert.equal(form.headers.get('x-frame-options'), 'DENY')
      assert.equal(form.headers.get('cache-control'), 'no-store')
      // An open redirect through `next` is refused.
      const evil = await client.get('/portal/sign-in?next=//evil.example/portal')
      assert.match(evil.text, /name="next" value="\/portal\/"/)
    })

    it('serves its assets itself, cacheable, with no external references in any page', async () => {
      const client = await signedIn(server, 'admin')
      const page = await client.get('/portal/')
      const assets = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!)
      assert.ok(
        assets.every((a) => a.startsWith('/') || a.startsWith('#') || a.startsWith('data:')),
        assets.join(' '),
      )
      for (const path of assets.filter((a) => a.startsWith('/portal/assets/'))) {
        const asset = await client.get(path)
        assert.equal(asset.status, 200)
        assert.match(asset.headers.get('content-type')!, /^text\/(css|javascript)/)
        assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      }
      assert.equal((await client.get('/portal/assets/portal.nope.css')).status, 404)
    })

    it('signs in with an HttpOnly, SameSite=Strict cookie scoped to /portal (not Secure over http), and records it', async () => {
      const client = new PortalClient(server.baseUrl)
      await client.get('/portal/sign-in')
      const before = decisions.length
      const response = await client.post('/portal/sign-in', {
        account: 'analyst@acme',
        password: PASSWORD('analyst'),
        next: '/portal/api-keys',
      })
      assert.equal(response.status, 303)
      assert.equal(response.location, '/portal/api-keys')
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('provenant_session='))!
      assert.match(cookie, /^provenant_session=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Strict$/)
      const page = await client.get('/portal/api-keys')
      assert.equal(page.status, 200)
      assert.match(page.text, /Signed in as <strong>analyst@acme<\/strong><span class="role-badge">analyst<\/span>/)
      const signedInRecord = decisions.slice(before).find((d) => d.actionType === 'signed-in')!
      assert.equal(signedInRecord.entityType, 'session')
      assert.equal(signedInRecord.workspaceId, server.workspace.id)
      assert.deepEqual(signedInRecord.actor, { id: server.accounts.analyst.id, name: 'analyst@acme', via: 'portal' })
      assert.equal(signedInRecord.details['clientAddress'], '127.0.0.1')
      assert.equal(signedInRecord.details['role'], 'analyst')
      assert.ok(!JSON.stringify(signedInRecord).includes(PASSWORD('analyst')))
    })

    it('refuses a wrong password with 401, sets no session and records the refusal', async () => {
      const client = new PortalClient(server.baseUrl)
      await client.get('/portal/sign-in')
      const before = decisions.length
      const response = await client.post('/portal/sign-in', { account: 'editor@acme', password: 'wrong-password-000' })
      assert.equal(response.status, 401)
      assert.match(response.text, /role="alert" id="signin-error"><p>The account name or password is not right\.<\/p>/)
      assert.equal(client.cookies.has('provenant_session'), false)
      const refusal = decisions.slice(before)
      assert.deepEqual(
        refusal.map((d) => [d.entityType, d.actionType, d.workspaceId, d.details['accountName'], d.details['reason']]),
        [['session', 'sign-in-refused', server.workspace.id, 'editor@acme', 'wrong account name or password']],
      )
      // An unknown name gets the same answer (no account enumeration) and is recorded too.
      const unknown = await client.post('/portal/sign-in', { account: 'nobody@acme', password: 'whatever-password' })
      assert.equal(unknown.status, 401)
      assert.match(unknown.text, /The account name or password is not right\./)
      assert.equal(decisions.at(-1)!.actionType, 'sign-in-refused')
      assert.equal(decisions.at(-1)!.actor.id, 'unknown')
    })

    it('issues a new session id at sign-in: a planted cookie never becomes a session (fixation)', async () => {
      const victim = new PortalClient(server.baseUrl)
      const planted = 'attacker-chosen-session-id-0123456789abcdefghij'
      victim.cookies.set('provenant_session', planted)
      const response = await victim.signIn('editor@acme', PASSWORD('editor'))
      assert.equal(response.status, 303)
      const issued = victim.cookies.get('provenant_session')!
      assert.notEqual(issued, planted)
      const attacker = new PortalClient(server.baseUrl)
      attacker.cookies.set('provenant_session', planted)
      assert.equal((await attacker.get('/portal/')).status, 303)
      // Signing in again from a signed-in browser (a sign-in form left open in another tab)
      // replaces its session: the old id stops working.
      const tab = new PortalClient(server.baseUrl)
      await tab.get('/portal/sign-in')
      victim.cookies.set('provenant_signin', tab.cookies.get('provenant_signin')!)
      const again = await victim.post('/portal/sign-in', { account: 'editor@acme', password: PASSWORD('editor'), _csrf: tab.csrf! })
      assert.equal(again.status, 303)
      assert.notEqual(victim.cookies.get('provenant_session'), issued)
      const stale = new PortalClient(server.baseUrl)
      stale.cookies.set('provenant_session', issued)
      const ended = await stale.get('/portal/')
      assert.equal(ended.status, 303)
      assert.match(ended.location!, /ended=1/)
    })

    it('signs out: the cookie is cleared and the session no longer works anywhere; "everywhere" ends the other sessions', async () => {
      const first = await signedIn(server, 'approver')
      const second = await signedIn(server, 'approver')
      const copy = new PortalClient(server.baseUrl)
      copy.cookies.set('provenant_session', first.cookies.get('provenant_session')!)
      const out = await first.post('/portal/sign-out', {})
      assert.equal(out.status, 303)
      assert.equal(out.location, '/portal/sign-in?signed-out=1')
      assert.equal(first.cookies.has('provenant_session'), false)
      assert.equal((await copy.get('/portal/')).status, 303)
      assert.equal((await second.get('/portal/')).status, 200)
      assert.equal(decisions.at(-1)!.actionType, 'signed-out')
      const third = await signedIn(server, 'approver')
      assert.match(
        (await third.get('/portal/')).text,
        /<input type="hidden" name="everywhere" value="1">\s*<button type="submit" class="secondary small">Sign out everywhere<\/button>/,
      )
      await third.post('/portal/sign-out', { everywhere: '1' })
      assert.equal((await second.get('/portal/')).status, 303)
      assert.equal(decisions.at(-1)!.details['sessionsEnded'], 2)
    })

    it('ends a session after 30 idle minutes and 12 hours after sign-in', async () => {
      const idle = await signedIn(server, 'viewer')
      clock.advance(29 * 60_000)
      assert.equal((await idle.get('/portal/')).status, 200)
      clock.advance(29 * 60_000)
      assert.equal((await idle.get('/portal/')).status, 200, 'activity keeps a session alive')
      clock.advance(31 * 60_000)
      assert.equal((await idle.get('/portal/')).status, 303)

      const busy = await signedIn(server, 'viewer')
      for (let i = 0; i < 28; i++) {
        clock.advance(25 * 60_000)
        assert.equal((await busy.get('/portal/')).status, 200, `after ${(i + 1) * 25} minutes`)
      }
      clock.advance(25 * 60_000)
      assert.equal((await busy.get('/portal/')).status, 303, 'past 12 hours')
    })

    it('a new password, a disabled account or a lost membership ends sessions at once; a new role holds at once', async () => {
      const name = 'rotating@acme'
      await server.services.admin.addAccount({ name, role: 'admin', workspaceId: server.workspace.id, password: 'first-password-123' })
      const client = new PortalClient(server.baseUrl)
      assert.equal((await client.signIn(name, 'first-password-123')).status, 303)
      assert.match((await client.get('/portal/')).text, /href="\/portal\/connections"/)
      await server.services.admin.setRole(server.workspace.id, name, 'viewer')
      const demoted = await client.get('/portal/')
      assert.doesNotMatch(demoted.text, /href="\/portal\/connections"/)
      assert.equal((await client.get('/portal/connections')).status, 403)
      await server.services.admin.setPassword(name, 'second-password-123')
      assert.equal((await client.get('/portal/')).status, 303)
      assert.equal((await client.signIn(name, 'second-password-123')).status, 303)
      await server.services.admin.setDisabled(name, true)
      assert.equal((await client.get('/portal/')).status, 303)
      assert.equal((await client.signIn(name, 'second-password-123')).status, 401)
    })

    it('never takes a bearer token instead of a session (URL or header)', async () => {
      const token = await server.token('admin')
      const client = new PortalClient(server.baseUrl)
      for (const path of [`/portal/api-keys?access_token=${token}`, `/portal/api-keys?token=${token}`]) {
        assert.equal((await client.get(path)).status, 303)
      }
      assert.equal((await client.get('/portal/api-keys', { authorization: `Bearer ${token}` })).status, 303)
    })

    it("refuses every POST without this session's CSRF token, or from another origin, and changes nothing", async () => {
      const client = await signedIn(server, 'analyst')
      const count = async () => (await server.services.access.listTokens(server.workspace.id, server.accounts.analyst.id)).length
      const tokens = await count()
      const form = { name: 'csrf probe', expires: '1h', rights: 'warm-queries:read' }
      const missing = await client.post('/portal/api-keys', form, { omitCsrf: true })
      assert.equal(missing.status, 403)
      assert.match(missing.text, /This form expired or did not come from a portal page, so nothing was changed/)
      assert.equal((await client.post('/portal/api-keys', { ...form, _csrf: 'x'.repeat(43) })).status, 403)
      const other = await signedIn(server, 'analyst')
      assert.equal((await client.post('/portal/api-keys', { ...form, _csrf: other.csrf! })).status, 403, "another session's token")
      assert.equal((await client.post('/portal/api-keys', form, { headers: { origin: 'https://evil.example' } })).status, 403)
      assert.equal((await client.post('/portal/api-keys', form, { headers: { 'sec-fetch-site': 'cross-site' } })).status, 403)
      assert.equal((await client.post('/portal/sign-out', {}, { omitCsrf: true })).status, 403)
      assert.equal(await count(), tokens)
      assert.equal((await client.get('/portal/')).status, 200, 'still signed in')
      // The right token from the same origin works, and the decision goes to the activity log.
      assert.equal((await client.post('/portal/api-keys', form, { headers: { origin: server.baseUrl } })).status, 200)
      assert.equal(await count(), tokens + 1)
      const created = decisions.at(-1)!
      assert.deepEqual(
        [created.entityType, created.actionType, created.actor.via, created.details['name'], created.details['rights']],
        ['token', 'created', 'portal', 'csrf probe', ['warm-queries:read']],
      )
      assert.ok(!JSON.stringify(created).includes('eyJ'), 'never the token itself')
    })

    it('refuses a sign-in form without its nonce (login CSRF): no session is made', async () => {
      const client = new PortalClient(server.baseUrl)
      const forged = await client.post('/portal/sign-in', { account: 'admin@acme', password: PASSWORD('admin') }, { omitCsrf: true })
      assert.equal(forged.status, 403)
      assert.match(forged.text, /This sign-in form expired or did not come from the portal/)
      assert.equal(client.cookies.has('provenant_session'), false)
      const stranger = new PortalClient(server.baseUrl)
      await stranger.get('/portal/sign-in')
      const borrowed = await client.post('/portal/sign-in', { account: 'admin@acme', password: PASSWORD('admin'), _csrf: stranger.csrf! })
      assert.equal(borrowed.status, 403)
      assert.equal(client.cookies.has('provenant_session'), false)
    })

    it('throttles guessing: 5 failures lock the account name for 15 minutes (even the right password), and it opens again', async () => {
      const client = new PortalClient(server.baseUrl)
      await client.get('/portal/sign-in')
      for (let i = 0; i < 5; i++)
        assert.equal((await client.post('/portal/sign-in', { account: 'Editor@acme', password: `guess-${i}-password` })).status, 401)
      const before = decisions.length
      const locked = await client.post('/portal/sign-in', { account: 'editor@acme', password: PASSWORD('editor') })
      assert.equal(locked.status, 429)
      assert.equal(locked.headers.get('retry-after'), '900')
      assert.match(locked.text, /Too many failed sign-ins for this account\. Try again in 15 minutes\./)
      assert.equal(client.cookies.has('provenant_session'), false)
      assert.equal(decisions.slice(before)[0]!.actionType, 'sign-in-throttled')
      // Other accounts from the same address are not locked by it.
      assert.equal((await client.post('/portal/sign-in', { account: 'viewer@acme', password: PASSWORD('viewer') })).status, 303)
      clock.advance(14 * 60_000)
      assert.equal((await new PortalClient(server.baseUrl).signIn('editor@acme', PASSWORD('editor'))).status, 429)
      clock.advance(60_000 + 1)
      assert.equal((await new PortalClient(server.baseUrl).signIn('editor@acme', PASSWORD('editor'))).status, 303)
    })

    it('throttles one address trying many names (20 failures in 15 minutes)', async () => {
      const client = new PortalClient(server.baseUrl)
      await client.get('/portal/sign-in')
      for (let i = 0; i < 20; i++)
        assert.equal((await client.post('/portal/sign-in', { account: `name-${i}@acme`, password: 'not-the-password' })).status, 401)
      const locked = await client.post('/portal/sign-in', { account: 'admin@acme', password: PASSWORD('admin') })
      assert.equal(locked.status, 429)
      assert.match(locked.text, /Too many failed sign-ins from your address/)
    })

    it('applies rights as the API does: pages the role lacks are 403 and absent from the navigation', async () => {
      const viewer = await signedIn(server, 'viewer')
      const home = await viewer.get('/portal/')
      for (const page of ['warm-queries', 'api-keys', 'corrections', 'activity'])
        assert.match(home.text, new RegExp(`href="/portal/${page}"`))
      for (const page of ['proposals', 'connections']) assert.doesNotMatch(home.text, new RegExp(`href="/portal/${page}"`))
      const denied = await viewer.get('/portal/connections')
      assert.equal(denied.status, 403)
      assert.match(denied.text, /Your role \(viewer\) does not include connections:manage, which this page needs\./)
      const admin = await signedIn(server, 'admin')
      assert.equal((await admin.get('/portal/connections')).status, 200)
    })

    it("refuses a forged POST that revokes another account's token (403); the token keeps working", async () => {
      const adminToken = await server.token('admin')
      const id = JSON.parse(Buffer.from(adminToken.split('.')[1]!, 'base64url').toString()).jti as string
      const viewer = await signedIn(server, 'viewer')
      const keys = await viewer.get('/portal/api-keys')
      assert.doesNotMatch(keys.text, new RegExp(id), 'a viewer does not even see it')
      const forged = await viewer.post(`/portal/api-keys/${id}/revoke`, {})
      assert.equal(forged.status, 403)
      assert.match(forged.text, /only the owner or an administrator can revoke this token/)
      assert.equal((await server.api('GET', '/oi-api/openapi', { token: adminToken })).status, 200)
      // An administrator may revoke it, and it stops working at once.
      const admin = await signedIn(server, 'admin')
      assert.match((await admin.get('/portal/api-keys')).text, new RegExp(`action="/portal/api-keys/${id}/revoke"`))
      const revoked = await admin.post(`/portal/api-keys/${id}/revoke`, {})
      assert.equal(revoked.status, 303)
      assert.equal((await server.api('GET', '/oi-api/openapi', { token: adminToken })).status, 401)
      assert.equal(decisions.at(-1)!.actionType, 'revoked')
      assert.equal(decisions.at(-1)!.entityId, id)
    })

    it("switches between the account's workspaces; a new role and rights come with the workspace", async () => {
      const other = await server.services.admin.createWorkspace(`second-${backend}`)
      await server.stores.access.setMembership({ workspaceId: other.id, accountId: server.accounts.viewer.id, role: 'admin' })
      const client = await signedIn(server, 'viewer')
      const home = await client.get('/portal/')
      assert.match(home.text, /<label for="workspace-switch">Workspace<\/label>/)
      assert.match(home.text, /<option value="acme" selected>acme<\/option><option value="second-[a-z]+">/)
      const switched = await client.post('/portal/workspace', { workspace: other.name })
      assert.equal(switched.status, 303)
      const there = await client.get('/portal/connections')
      assert.equal(there.status, 200)
      assert.match(there.text, /<span class="role-badge">admin<\/span>/)
      assert.equal((await client.post('/portal/workspace', { workspace: 'not-mine' })).status, 404)
      await client.post('/portal/workspace', { workspace: 'acme' })
      assert.equal((await client.get('/portal/connections')).status, 403)
    })

    it('refuses an account without a workspace after checking its password, and says why', async () => {
      const lonely = {
        id: `acc_lonely${backend}`,
        name: `lonely-${backend}`,
        displayName: 'Lonely',
        disabled: false,
        createdAt: Date.now(),
      }
      await server.stores.access.insertAccount(lonely)
      await server.services.admin.setPassword(lonely.name, 'lonely-password-123')
      const client = new PortalClient(server.baseUrl)
      const response = await client.signIn(lonely.name, 'lonely-password-123')
      assert.equal(response.status, 403)
      assert.match(response.text, /This account is not a member of any workspace yet\. Ask an administrator to add it\./)
      assert.equal((await client.signIn(lonely.name, 'wrong-password-123')).status, 401)
    })

    it('escapes what people type: a token named like a script shows as text', async () => {
      const client = await signedIn(server, 'editor')
      const name = '<script>alert("x")</script>'
      const page = await client.post('/portal/api-keys', { name, expires: '15m', rights: 'warm-queries:read' })
      assert.equal(page.status, 200)
      assert.ok(!page.text.includes(name))
      assert.match(page.text, /<th scope="row">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;<\/th>/)
    })

    it('answers unknown portal paths with a 404 page, not the API envelope', async () => {
      const client = await signedIn(server, 'viewer')
      const missing = await client.get('/portal/nowhere')
      assert.equal(missing.status, 404)
      assert.match(missing.headers.get('content-type')!, /^text\/html/)
      assert.match(missing.text, /There is no portal page at \/portal\/nowhere\./)
      const query = await client.get('/portal/warm-queries/nope')
      assert.equal(query.status, 404)
      assert.match(query.text, /this workspace has no warm query &quot;nope&quot;/)
    })

    it('refuses custom lifetimes outside 15 minutes..30 days and rights beyond the role, with a message', async () => {
      const analyst = await signedIn(server, 'analyst')
      const count = async () => (await server.services.access.listTokens(server.workspace.id, server.accounts.analyst.id)).length
      const tokens = await count()
      for (const [custom, message] of [
        ['10m', /must be between 15 minutes and 30 days; 10m is outside that range/],
        ['31d', /31d is outside that range/],
        ['soon', /&quot;soon&quot; is not a duration/],
      ] as const) {
        const response = await analyst.post('/portal/api-keys', {
          name: 'bad expiry',
          expires: 'custom',
          customExpires: custom,
          rights: 'warm-queries:read',
        })
        assert.equal(response.status, 400)
        assert.match(response.text, message)
        assert.match(
          response.text,
          /id="custom-expires" name="customExpires" type="text" value="[^"]*" spellcheck="false" aria-invalid="true"/,
        )
      }
      const beyond = await analyst.post('/portal/api-keys', {
        name: 'too much',
        expires: '1h',
        rights: ['warm-queries:read', 'amendments:approve'],
      })
      assert.equal(beyond.status, 400)
      assert.match(
        beyond.text,
        /a token cannot exceed its owner&#39;s rights: the analyst role of analyst@acme does not include amendments:approve/,
      )
      assert.equal(await count(), tokens)
    })
  })
}

describe('portal cookies over https', () => {
  it('are Secure with the __Secure- prefix when the public URL is https', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-portal-'))
    const runtime = await createRuntime(loadConfig({ data: dataDir, port: 0, publicUrl: 'https://portal.example' }, {}), {
      logger: pino({ level: 'silent' }),
      scryptCost: TEST_SCRYPT,
    })
    try {
      const workspace = await runtime.services.admin.createWorkspace('acme')
      await runtime.services.admin.addAccount({ name: 'admin@acme', role: 'admin', workspaceId: workspace.id, password: PASSWORD('admin') })
      const form = await runtime.app.inject({ method: 'GET', url: '/portal/sign-in' })
      const nonceCookie = String(form.headers['set-cookie'])
      assert.match(
        nonceCookie,
        /^__Secure-provenant_signin=[A-Za-z0-9_-]+; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=3600; Secure$/,
      )
      const nonce = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!
      const response = await runtime.app.inject({
        method: 'POST',
        url: '/portal/sign-in',
        headers: {
          cookie: nonceCookie.split(';')[0]!,
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://portal.example',
        },
        payload: new URLSearchParams({ _csrf: nonce, account: 'admin@acme', password: PASSWORD('admin') }).toString(),
      })
      assert.equal(response.statusCode, 303)
      const cookies = ([] as string[]).concat(response.headers['set-cookie'] as string[])
      assert.match(cookies[0]!, /^__Secure-provenant_session=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Strict; Secure$/)
    } finally {
      await runtime.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

if (BACKENDS.includes('postgres')) {
  describe('postgres: portal sessions shared by two API processes', () => {
    it('a session opened on one process works on the other, and signing out on either ends it on both', async () => {
      const database = await createTestDatabase()
      const a = await startTestServer('postgres', { databaseUrl: database.url })
      const b = await startTestServer('postgres', { databaseUrl: database.url })
      try {
        const onA = await signedIn(a, 'editor')
        const onB = new PortalClient(b.baseUrl)
        onB.cookies.set('provenant_session', onA.cookies.get('provenant_session')!)
        const page = await onB.get('/portal/api-keys')
        assert.equal(page.status, 200)
        assert.match(page.text, /Signed in as <strong>editor@acme<\/strong>/)
        // The CSRF token is the session's, so a form from A posts fine to B.
        assert.equal(onB.csrf, onA.csrf)
        assert.equal((await onB.post('/portal/sign-out', {})).status, 303)
        assert.equal((await onA.get('/portal/')).status, 303)
      } finally {
        await a.stop()
        await b.stop()
        await database.drop()
      }
    })
  })
}
