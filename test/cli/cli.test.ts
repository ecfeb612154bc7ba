/**
 * The `provenant` command line (issue: foundation, item 8): help for every command, errors in
 * words with a non-zero exit, tokens printed alone on stdout, and configuration applied as commits.
 * A few cases start the real process (exit codes, stdin, stdout holding only the token); the rest
 * run the same command in this process, since each start of the CLI through tsx costs seconds.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess as cli, runCli } from '../support/cli.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

describe('provenant CLI: help and usage', () => {
  it('prints help for the program and every command, exit 0', async () => {
    const top = await runCli(['--help'])
    assert.equal(top.code, 0)
    for (const command of ['serve', 'workspace', 'account', 'token', 'apply']) {
      assert.match(top.stdout, new RegExp(`\\n  ${command} `))
      const help = await cli([command, '--help'])
      assert.equal(help.code, 0, help.stderr)
      assert.match(help.stdout, new RegExp(`usage: provenant ${command}`))
    }
  })

  it('refuses an unknown command with exit 2', async () => {
    const result = await runCli(['frobnicate'])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /unknown command "frobnicate"/)
  })
})

for (const backend of BACKENDS) {
  describe(`${backend}: provenant CLI against the store`, () => {
    let server: TestServer
    let store: string[]
    const dir = mkdtempSync(join(tmpdir(), 'provenant-cli-'))
    after(() => rmSync(dir, { recursive: true, force: true }))
    before(async () => {
      server = await startTestServer(backend)
      store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
    })
    after(() => server.stop())

    it('token create prints only a JWT that the running server accepts', async () => {
      const result = await runCli([
        'token',
        'create',
        '--account',
        server.accounts.analyst.name,
        '--expires',
        '8h',
        '--workspace',
        'acme',
        '--rights',
        'amendments:read',
        ...store,
      ])
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/)
      const response = await server.api('GET', '/oi-api/provenance/reason-categories', { token: result.stdout.trim() })
      assert.equal(response.status, 200)
    })

    it('token create refuses a bad expiry and rights beyond the owner, in words', async () => {
      const expiry = await cli([
        'token',
        'create',
        '--account',
        server.accounts.analyst.name,
        '--expires',
        '14m59s',
        '--workspace',
        'acme',
        ...store,
      ])
      assert.equal(expiry.code, 1)
      assert.match(expiry.stderr, /between 15 minutes and 30 days/)
      assert.equal(expiry.stdout, '')
      const rights = await cli([
        'token',
        'create',
        '--account',
        server.accounts.viewer.name,
        '--expires',
        '1h',
        '--rights',
        'ingest:write',
        '--workspace',
        'acme',
        ...store,
      ])
      assert.equal(rights.code, 1)
      assert.match(rights.stderr, /cannot exceed its owner's rights/)
      const usage = await cli(['token', 'create', '--workspace', 'acme', ...store])
      assert.equal(usage.code, 2)
      assert.match(usage.stderr, /needs --account NAME/)
    })

    it('apply shows the changes and commits; a bad file is refused whole with paths', async () => {
      const good = join(dir, `good-${backend}.yaml`)
      writeFileSync(
        good,
        `connections:
  - lookup: meters
    kind: push
    table: Meters
    columns:
      - { name: timestamp, type: datetime }
      - { name: kwh, type: real }
warmQueries:
  - lookup: daily-kwh
    path: energy/daily
    query: Meters | summarize sum(kwh) by bin(timestamp, 1d)
`,
      )
      const dry = await cli(['apply', good, '--account', server.accounts.admin.name, '--dry-run', '--workspace', 'acme', ...store])
      assert.equal(dry.code, 0, dry.stderr)
      assert.match(dry.stdout, /\+ connection meters[\s\S]*\+ warmQuery daily-kwh[\s\S]*dry run: nothing committed/)
      assert.equal((await server.services.config.history(server.workspace.id)).length, 0)

      const applied = await cli([
        'apply',
        good,
        '--account',
        server.accounts.approver.name,
        '-m',
        'meters',
        '--workspace',
        'acme',
        ...store,
      ])
      assert.equal(applied.code, 0, applied.stderr)
      assert.match(applied.stdout, /committed [0-9a-f]{12} \(#1\) to acme/)
      server.services.config.invalidate(server.workspace.id)
      const current = await server.services.config.current(server.workspace.id)
      assert.equal(current.approvals['daily-kwh']?.accountName, server.accounts.approver.name)

      const bad = join(dir, `bad-${backend}.yaml`)
      writeFileSync(bad, 'connections:\n  - lookup: meters\n    kind: kafka\n    table: Meters\n    columns: []\n')
      const refused = await cli(['apply', bad, '--account', server.accounts.admin.name, '--workspace', 'acme', ...store])
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /connections\[0\]\.kind: /)
      assert.match(refused.stderr, /connections\[0\]\.columns: /)
      const syntax = join(dir, `syntax-${backend}.yaml`)
      writeFileSync(syntax, 'connections:\n  - lookup: a\n    lookup: b\n')
      const duplicate = await cli(['apply', syntax, '--account', server.accounts.admin.name, '--workspace', 'acme', ...store])
      assert.equal(duplicate.code, 1)
      assert.match(duplicate.stderr, /not valid YAML\/JSON[\s\S]*unique/i)
      assert.equal((await server.services.config.history(server.workspace.id)).length, 1, 'nothing half-applied')

      const again = await cli(['apply', good, '--account', server.accounts.approver.name, '--workspace', 'acme', ...store])
      assert.match(again.stdout, /no changes/)
    })

    it('account and workspace commands list what exists', async () => {
      const accounts = await cli(['account', 'list', '--workspace', 'acme', ...store])
      assert.equal(accounts.code, 0, accounts.stderr)
      for (const role of ['viewer', 'analyst', 'editor', 'approver', 'admin'])
        assert.match(accounts.stdout, new RegExp(`${role}@acme\\s+${role}`))
      const added = await runCli(
        ['account', 'add', `cli-user-${backend}`, '--role', 'analyst', '--password-stdin', '--workspace', 'acme', ...store],
        { stdin: 'a-long-enough-password\n' },
      )
      assert.equal(added.code, 0, added.stderr)
      assert.ok(await server.services.admin.checkPassword(`cli-user-${backend}`, 'a-long-enough-password'))
      const badRole = await cli(['account', 'add', 'x', '--role', 'superuser', '--workspace', 'acme', ...store])
      assert.equal(badRole.code, 1)
      assert.match(badRole.stderr, /unknown role "superuser"; roles are viewer, analyst, editor, approver, admin/)
    })
  })
}
