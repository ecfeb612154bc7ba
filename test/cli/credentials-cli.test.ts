/**
 * `provenant connection …-credentials` and `provenant keys rotate` (design §11) against a running
 * server's store on both backends: values only from stdin or a file, never echoed, and a rotation
 * that re-seals every credential while the running server keeps opening them.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { masterKeyFileOf } from '../../src/adapters/keys/master-key.js'
import { UsageError } from '../../src/cli/cli-support.js'
import { connectionCommand, parseCredentialText } from '../../src/cli/commands/connection.js'
import { masterKeyId } from '../../src/domain/credentials/credential-cipher.js'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess as cli, runCli } from '../support/cli.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { openRawDatabase } from '../support/raw-database.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

describe('provenant connection set-credentials: values never on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-creds-argv-'))
  const secret = `argv-${randomBytes(12).toString('hex')}`
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('refuses value-like options and extra arguments in words, without repeating them (checked before any parsing)', async () => {
    const cases = [
      ['connection', 'set-credentials', 'sensors', `--password=${secret}`],
      ['connection', 'set-credentials', 'sensors', '--password', secret],
      ['connection', 'set-credentials', 'sensors', secret],
      ['connection', 'set-credentials', 'sensors', `--dsn=postgres://u:${secret}@h/db`],
      ['connection', 'set-credentials', 'sensors', `-p${secret}`],
    ]
    for (const args of cases) {
      const error = await connectionCommand.run(args).then(
        () => undefined,
        (e: unknown) => e as Error,
      )
      assert.ok(error instanceof UsageError, args.join(' '))
      assert.match(error.message, /never taken from the command line/)
      assert.equal(error.message.includes(secret), false, error.message)
    }
    assert.throws(
      () => parseCredentialText(`{"password": "${secret}`),
      (e: unknown) => e instanceof UsageError && /not valid JSON/.test(e.message) && !e.message.includes(secret),
    )
    assert.throws(
      () => parseCredentialText(`user=a\n${secret}\n`),
      (e: unknown) => e instanceof UsageError && /line 2 .* not key=value/.test(e.message) && !e.message.includes(secret),
    )
    assert.throws(() => parseCredentialText('  \n'), /no credentials were given/)
  })

  it('the real command exits 2 with the refusal, and 1 for a master key of the wrong length', async () => {
    const [refused, wrongKey] = await Promise.all([
      runCli(['connection', 'set-credentials', 'sensors', `--password=${secret}`, '--data', dir], { stdin: '{"password":"from-stdin"}' }),
      runCli(['connection', 'credentials', '--data', dir], { env: { PROVENANT_MASTER_KEY: 'c2hvcnQ=' } }),
    ])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /never taken from the command line/)
    assert.equal(`${refused.stdout}${refused.stderr}`.includes(secret), false)
    assert.equal(wrongKey.code, 1)
    assert.match(wrongKey.stderr, /PROVENANT_MASTER_KEY must be 32 bytes/)
  })
})

for (const backend of BACKENDS) {
  describe(`${backend}: provenant connection credentials and keys rotate`, () => {
    let server: TestServer
    let store: string[]
    const dir = mkdtempSync(join(tmpdir(), 'provenant-creds-cli-'))
    const secret = `cli-${randomBytes(12).toString('hex')}`
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
    })
    after(async () => {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    })
    const vault = () => server.runtime.credentialVault

    it('set-credentials reads a JSON object from stdin, or key=value lines from --file, and never prints a value', async () => {
      const file = join(dir, 'meters.env')
      writeFileSync(file, `# meters broker\nusername=meter\n\npassword=${secret}=x\r\n`)
      const [fromStdin, fromFile] = await Promise.all([
        runCli(['connection', 'set-credentials', 'sensors', ...store], { stdin: JSON.stringify({ user: 'reader', password: secret }) }),
        runCli(['connection', 'set-credentials', 'meters', '--file', file, '--workspace', 'acme', ...store]),
      ])
      assert.equal(fromStdin.code, 0, fromStdin.stderr)
      assert.match(
        fromStdin.stdout,
        /credentials of connection sensors set in workspace acme \(keys: password, user; master key [0-9a-f]{8}\)/,
      )
      assert.equal(fromFile.code, 0, fromFile.stderr)
      for (const r of [fromStdin, fromFile]) assert.equal(`${r.stdout}${r.stderr}`.includes(secret), false)
      assert.deepEqual({ ...(await vault().reveal(server.workspace.id, 'sensors')) }, { user: 'reader', password: secret })
      // comments and blank lines ignored, everything after the first = kept, a final CR dropped
      assert.deepEqual({ ...(await vault().reveal(server.workspace.id, 'meters')) }, { username: 'meter', password: `${secret}=x` })
    })

    it('credentials shows status (keys, who, master key) but never values; clear-credentials removes them', async () => {
      const status = await cli(['connection', 'credentials', ...store])
      const one = await cli(['connection', 'credentials', 'sensors', ...store])
      assert.equal(status.code, 0, status.stderr)
      assert.match(status.stdout, /meters\s+set\s+password,username\s+\S+\s+provenant CLI\s+[0-9a-f]{8}/)
      assert.match(status.stdout, /sensors\s+set\s+password,user\s/)
      assert.equal(one.code, 0, one.stderr)
      assert.match(one.stdout, /^CONNECTION.*\n-.*\nsensors\s+set\s+password,user\s+\S+\s+provenant CLI\s+[0-9a-f]{8}\n$/)
      assert.equal(`${status.stdout}${one.stdout}`.includes(secret), false)
      const cleared = await cli(['connection', 'clear-credentials', 'meters', ...store])
      assert.equal(cleared.code, 0, cleared.stderr)
      assert.match(cleared.stdout, /credentials of connection meters cleared/)
      assert.equal(await vault().reveal(server.workspace.id, 'meters'), undefined)
      assert.deepEqual(await server.services.credentials.status(server.workspace.id, 'meters'), {
        connection: 'meters',
        set: false,
        keys: [],
      })
    })

    it('keys rotate re-seals every credential under a new key the running server uses at once; --retire-old drops the older keys', async () => {
      const before = await server.services.credentials.status(server.workspace.id, 'sensors')
      const rotated = await cli(['keys', 'rotate', ...store])
      assert.equal(rotated.code, 0, rotated.stderr)
      const after = await server.services.credentials.status(server.workspace.id, 'sensors')
      assert.notEqual(after.keyId, before.keyId)
      assert.match(rotated.stdout, new RegExp(`added master key ${after.keyId}`))
      assert.match(rotated.stdout, new RegExp(`re-sealed 1 credential\\(s\\) under master key ${after.keyId}; 0 already under it`))
      assert.equal(after.updatedAt, before.updatedAt)
      assert.equal((await vault().reveal(server.workspace.id, 'sensors'))?.['password'], secret)
      // set by the running server after the rotation: sealed under the new key
      assert.equal(
        (await server.services.credentials.set({ id: 'x', name: 'x', via: 'api' }, server.workspace.id, 'meters', { token: 'tttt-1' }))
          .keyId,
        after.keyId,
      )
      const retire = await cli(['keys', 'rotate', '--retire-old', ...store])
      assert.equal(retire.code, 0, retire.stderr)
      // a rotation with --retire-old is a whole one: yet another new key, everything re-sealed, both older keys gone
      assert.match(retire.stdout, /re-sealed 2 credential\(s\) under master key [0-9a-f]{8}; 0 already under it/)
      assert.match(
        retire.stdout,
        new RegExp(`retired master key\\(s\\) (${before.keyId}, ${after.keyId}|${after.keyId}, ${before.keyId})\\b`),
      )
      const keyLines = readFileSync(masterKeyFileOf(server.config.dataDir), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
      assert.equal(keyLines.length, 1)
      assert.equal((await vault().reveal(server.workspace.id, 'sensors'))?.['password'], secret)
      assert.equal(rotated.stdout.includes(secret) || retire.stdout.includes(secret), false)
      const raw = await openRawDatabase(server)
      try {
        const rows = await raw.all<{ body: string }>("SELECT body FROM ledger_records WHERE entity_type = 'master-key' ORDER BY seq")
        assert.equal(rows.length, 2)
        const first = JSON.parse(rows[0]!.body) as {
          actionType: string
          details: { keyId: string; fromKeyIds: string[]; resealed: number }
        }
        assert.equal(first.actionType, 'rotated')
        assert.deepEqual(
          { ...first.details, actor: undefined },
          { keyId: after.keyId, fromKeyIds: [before.keyId], resealed: 1, actor: undefined },
        )
        for (const line of keyLines)
          assert.equal(
            rows.some((r) => r.body.includes(line)),
            false,
          )
      } finally {
        await raw.close()
      }
    })

    it('with PROVENANT_MASTER_KEY, rotate re-seals under the new key given there and the old in _PREVIOUS', async () => {
      const [k1, k2] = [randomBytes(32), randomBytes(32)]
      const envServer = await startTestServer(backend, { config: { masterKey: k1.toString('base64') } })
      try {
        await applyAsAdmin(envServer, sensorConfig())
        const envStore = [
          '--data',
          envServer.config.dataDir,
          ...(envServer.config.databaseUrl ? ['--database-url', envServer.config.databaseUrl] : []),
        ]
        const set = await envServer.services.credentials.set({ id: 'x', name: 'x', via: 'api' }, envServer.workspace.id, 'sensors', {
          password: secret,
        })
        assert.equal(set.keyId, masterKeyId(k1))
        const rotated = await cli(['keys', 'rotate', '--retire-old', ...envStore], {
          PROVENANT_MASTER_KEY: k2.toString('base64'),
          PROVENANT_MASTER_KEY_PREVIOUS: k1.toString('base64'),
        })
        assert.equal(rotated.code, 0, rotated.stderr)
        assert.match(rotated.stdout, /re-sealed 1 credential/)
        assert.match(rotated.stdout, /PROVENANT_MASTER_KEY_PREVIOUS can be removed/)
        assert.equal((await envServer.services.credentials.status(envServer.workspace.id, 'sensors')).keyId, masterKeyId(k2))
      } finally {
        await envServer.stop()
      }
    })
  })
}
