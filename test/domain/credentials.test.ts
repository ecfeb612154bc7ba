/**
 * Connection credentials (issue 6 item 1, design §11) through the real services on both backends:
 * the service never returns a value, the vault is the only way to plaintext, every change is a
 * decision with key names only, and the stored row opens only for its own connection.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { Actor } from '../../src/domain/activity/activity-log.js'
import { CredentialDecryptError } from '../../src/domain/credentials/credential-cipher.js'
import { InvalidInputError, NotFoundError } from '../../src/domain/errors.js'
import { scrub } from '../../src/shared/secret-scrubber.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { openRawDatabase } from '../support/raw-database.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: connection credentials (design §11)`, () => {
    let server: TestServer
    let actor: Actor
    const secret = `pw-${randomBytes(12).toString('hex')}`
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      actor = { id: server.accounts.admin.id, name: server.accounts.admin.name, via: 'portal' }
    })
    after(() => server.stop())
    const ws = () => server.workspace.id
    const credentials = () => server.services.credentials

    it('refuses a connection that is not configured (404) and bad values (400) without echoing any value', async () => {
      await assert.rejects(credentials().set(actor, ws(), 'nope', { password: secret }), NotFoundError)
      for (const lookup of ['', 'a\u0000b', 'x'.repeat(65), '../sensors']) {
        await assert.rejects(credentials().status(ws(), lookup), NotFoundError)
        await assert.rejects(credentials().clear(actor, ws(), lookup), NotFoundError)
      }
      const bad: [unknown, RegExp][] = [
        [{}, /at least one key/],
        [[secret], /JSON object/],
        [{ password: '' }, /"password" is empty/],
        [{ password: 42 }, /"password" must be a string/],
        [{ 'bad key': secret }, /key names/],
        [{ password: 'x'.repeat(16 * 1024 + 1) }, /longer than 16384 bytes/],
        [Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, secret])), /at most 32 keys/],
      ]
      for (const [values, message] of bad) {
        const error = await credentials()
          .set(actor, ws(), 'sensors', values as Record<string, string>)
          .then(
            () => undefined,
            (e: unknown) => e as Error,
          )
        assert.ok(error instanceof InvalidInputError, String(error))
        assert.match(error.message, message)
        assert.equal(error.message.includes(secret), false)
      }
      assert.deepEqual(await credentials().status(ws(), 'sensors'), { connection: 'sensors', set: false, keys: [] })
    })

    it('sets credentials: status shows key names, who and when, never values; the vault reveals them', async () => {
      const status = await credentials().set(actor, ws(), 'sensors', { user: 'reader', password: secret })
      assert.deepEqual(Object.keys(status).sort(), ['connection', 'keyId', 'keys', 'set', 'updatedAt', 'updatedBy'])
      assert.deepEqual(status.keys, ['password', 'user'])
      assert.equal(status.updatedBy, actor.name)
      assert.match(status.keyId!, /^[0-9a-f]{8}$/)
      assert.deepEqual(await credentials().status(ws(), 'sensors'), status)
      assert.deepEqual(await credentials().list(ws()), [status, { connection: 'meters', set: false, keys: [] }])
      assert.equal(JSON.stringify(status).includes(secret), false)
      const revealed = await server.runtime.credentialVault.reveal(ws(), 'sensors')
      assert.deepEqual({ ...revealed }, { user: 'reader', password: secret })
      assert.equal(await server.runtime.credentialVault.reveal(ws(), 'meters'), undefined)
      assert.equal('credentialVault' in server.services, false)
      // revealed values are scrubbed from anything the process logs or answers from now on
      assert.equal(scrub(`login failed: password ${secret} rejected`), 'login failed: password [REDACTED] rejected')
    })

    it('records a decision with key names only and announces a workspace change of kind credentials', async () => {
      const raw = await openRawDatabase(server)
      try {
        const rows = await raw.all<{ body: string }>(
          "SELECT body FROM ledger_records WHERE entity_type = 'connection-credentials' ORDER BY seq",
        )
        assert.equal(rows.length, 1)
        const body = JSON.parse(rows[0]!.body) as { actionType: string; entityId: string; details: { keys: string[]; connection: string } }
        assert.equal(body.actionType, 'credentials-set')
        assert.equal(body.entityId, 'sensors')
        assert.deepEqual(body.details.keys, ['password', 'user'])
        assert.equal(rows[0]!.body.includes(secret), false)
        const stored = await raw.all<Record<string, unknown>>('SELECT * FROM connection_credentials')
        assert.equal(stored.length, 1)
        assert.equal(JSON.stringify(stored).includes(secret), false)
        assert.equal(JSON.stringify(stored).includes(Buffer.from(secret).toString('base64')), false)
      } finally {
        await raw.close()
      }
      const changes = await server.stores.changes.since(ws(), 0, 1000)
      const change = changes.find((c) => c.kind === 'credentials')
      assert.equal(change?.action, 'set')
      assert.equal(change?.entityId, 'sensors')
      assert.equal(change?.summary.includes(secret), false)
    })

    it('a sealed row moved to another connection does not open there', async () => {
      await credentials().set(actor, ws(), 'meters', { token: `t-${randomBytes(8).toString('hex')}` })
      const raw = await openRawDatabase(server)
      try {
        await raw.run("DELETE FROM connection_credentials WHERE lookup = 'meters'")
        await raw.run("UPDATE connection_credentials SET lookup = 'meters' WHERE lookup = 'sensors'")
        await assert.rejects(server.runtime.credentialVault.reveal(ws(), 'meters'), CredentialDecryptError)
        await raw.run("UPDATE connection_credentials SET lookup = 'sensors' WHERE lookup = 'meters'")
      } finally {
        await raw.close()
      }
      assert.equal((await server.runtime.credentialVault.reveal(ws(), 'sensors'))?.['password'], secret)
      // a rotation's re-seal never overwrites a sealing it did not read (a concurrent set wins)
      const current = (await server.stores.credentials.get(ws(), 'sensors'))!
      const stale = { ...current.sealed, nonce: Buffer.alloc(12) }
      assert.equal(await server.stores.credentials.reseal(ws(), 'sensors', stale, current.sealed), false)
      assert.equal(await server.stores.credentials.reseal(ws(), 'sensors', current.sealed, current.sealed), true)
    })

    it('replacing and clearing are decisions too; cleared credentials are gone from the vault', async () => {
      const replaced = await credentials().set(actor, ws(), 'sensors', { dsn: `${secret}-v2` })
      assert.deepEqual(replaced.keys, ['dsn'])
      assert.equal(await credentials().clear(actor, ws(), 'sensors'), true)
      assert.equal(await credentials().clear(actor, ws(), 'sensors'), false)
      assert.deepEqual(await credentials().status(ws(), 'sensors'), { connection: 'sensors', set: false, keys: [] })
      assert.equal(await server.runtime.credentialVault.reveal(ws(), 'sensors'), undefined)
      const raw = await openRawDatabase(server)
      try {
        const rows = await raw.all<{ body: string }>(
          "SELECT body FROM ledger_records WHERE entity_type = 'connection-credentials' ORDER BY seq",
        )
        const actions = rows.map((r) => (JSON.parse(r.body) as { actionType: string }).actionType)
        assert.deepEqual(actions, ['credentials-set', 'credentials-set', 'credentials-set', 'credentials-cleared'])
      } finally {
        await raw.close()
      }
    })

    it('credentials outlive removing their connection from the configuration: list marks them, clear removes them, set is refused', async () => {
      await credentials().set(actor, ws(), 'meters', { token: `t-${randomBytes(8).toString('hex')}` })
      const config = sensorConfig() as { connections: { lookup: string }[]; surfaces: { lookup: string }[] }
      await applyAsAdmin(server, {
        ...config,
        connections: config.connections.filter((c) => c.lookup !== 'meters'),
        surfaces: config.surfaces.filter((x) => x.lookup !== 'yard'),
      })
      const listed = await credentials().list(ws())
      assert.deepEqual(
        listed.map((s) => [s.connection, s.set, s.configured]),
        [
          ['sensors', false, undefined],
          ['meters', true, false],
        ],
      )
      await assert.rejects(credentials().set(actor, ws(), 'meters', { token: 'abcdefgh' }), NotFoundError)
      assert.equal(await credentials().clear(actor, ws(), 'meters'), true)
      assert.deepEqual(
        (await credentials().list(ws())).map((s) => s.connection),
        ['sensors'],
      )
    })
  })
}
