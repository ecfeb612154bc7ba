/**
 * Issue 18, item 5: `provenant token list` names each token's account, so an operator can tell
 * whose token to revoke without looking ids up (the id stays for scripts).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess } from '../support/cli.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: provenant token list`, () => {
    let server: TestServer
    let store: string[]
    before(async () => {
      server = await startTestServer(backend)
      store = [
        '--workspace',
        'acme',
        '--data',
        server.config.dataDir,
        ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : []),
      ]
    })
    after(() => server.stop())

    /** The table as rows of cells keyed by header (cells are separated by two or more spaces). */
    function rows(stdout: string): Record<string, string>[] {
      const [header, _rule, ...lines] = stdout.trimEnd().split('\n')
      const names = header!.trim().split(/\s{2,}/)
      return lines.map((line) =>
        Object.fromEntries(
          line
            .trim()
            .split(/\s{2,}/)
            .map((cell, i) => [names[i], cell]),
        ),
      )
    }

    const mint = (role: 'analyst' | 'approver', name: string) =>
      server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts[role].id,
        name,
        expires: '1h',
        createdBy: { id: server.accounts[role].id, name: server.accounts[role].name },
      })

    it('shows the account name of every token, and its id', async () => {
      await mint('analyst', 'dashboard')
      await mint('approver', 'reviews')
      const result = await runCliInProcess(['token', 'list', ...store])
      assert.equal(result.code, 0, result.stderr)
      const listed = rows(result.stdout)
      const dashboard = listed.find((r) => r['NAME'] === 'dashboard')
      const reviews = listed.find((r) => r['NAME'] === 'reviews')
      assert.ok(dashboard && reviews, result.stdout)
      assert.equal(dashboard['ACCOUNT'], server.accounts.analyst.name)
      assert.equal(dashboard['ACCOUNT ID'], server.accounts.analyst.id)
      assert.equal(reviews['ACCOUNT'], server.accounts.approver.name)
    })

    it('--account NAME lists only that account’s tokens, named', async () => {
      const result = await runCliInProcess(['token', 'list', '--account', server.accounts.approver.name, ...store])
      assert.equal(result.code, 0, result.stderr)
      const listed = rows(result.stdout)
      assert.ok(listed.length >= 1)
      for (const row of listed) assert.equal(row['ACCOUNT'], server.accounts.approver.name)
    })
  })
}
