/**
 * `provenant verify` against the store and `provenant verify-export` on an exported file with no
 * server (issue 4, item 7): the same verdict fields as the API, exit 0 when valid and 1 when not;
 * the export verifies offline and fails offline after any edit. Exit codes and the offline tool
 * are checked on the real process; the other cases run the same commands in this process.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { containerIdForScope } from '../../src/domain/ledger/digest.js'
import { isExportValid, verifyExport } from '../../src/domain/ledger/export-format.js'
import { parseVerifierKey } from '../../src/domain/ledger/signed-note.js'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess as cli, runCli } from '../support/cli.js'
import { testKey } from '../support/ledger-fixture.js'
import { openRawDatabase } from '../support/raw-database.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const R = (n: number): string => String(n).padStart(12, '0')
const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe('provenant verify / verify-export: help and usage', () => {
  it('prints help; a missing file is a usage error (exit 2)', async () => {
    for (const command of ['verify', 'verify-export']) {
      const help = await cli([command, '--help'])
      assert.equal(help.code, 0, help.stderr)
      assert.match(help.stdout, new RegExp(`usage: provenant ${command}`))
    }
    const missing = await runCli(['verify-export', '/nonexistent/export.json'])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /does not exist/)
    const badKey = await runCli(['verify-export', '/dev/null', '--public-key', 'not-a-key'])
    assert.equal(badKey.code, 2)
  })
})

for (const backend of BACKENDS) {
  describe(`${backend}: provenant verify and verify-export`, () => {
    let server: TestServer
    let store: string[]
    let editor: string
    const dir = mkdtempSync(join(tmpdir(), 'provenant-verify-'))
    after(() => rmSync(dir, { recursive: true, force: true }))
    before(async () => {
      server = await startTestServer(backend)
      store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
      editor = await server.token('editor')
      for (const scope of ['alpha', 'beta']) {
        for (let n = 1; n <= 6; n++) {
          const r = await server.api('POST', '/oi-api/provenance/events', {
            token: editor,
            body: {
              ScopeKey: scope,
              entityType: 'batch',
              entityId: `B-${n}`,
              actionType: 'update',
              details: { n, note: 'Entrée, "quoted"' },
            },
          })
          assert.equal(r.status, 200)
        }
      }
    })
    after(() => server.stop())

    it('verify: every container of the workspace (scopes, Platform-Config, heads log), exit 0', async () => {
      const result = await runCli(['verify', ...store])
      assert.equal(result.code, 0, result.stderr)
      const verdicts = lines(result.stdout)
      const byContainer = new Map(verdicts.map((v) => [v['container'], v]))
      for (const c of ['scope:alpha', 'scope:beta', 'platform', 'heads']) {
        const v = byContainer.get(c)
        assert.ok(v, `${c} verified`)
        assert.deepEqual([v['ChainValid'], v['BrokenAt'], v['ForkDetected'], v['Empty'], v['Valid']], [true, null, false, false, null])
      }
      assert.deepEqual(Object.keys(byContainer.get('scope:alpha')!), [
        'workspace',
        'container',
        'ScopeKey',
        'Valid',
        'ChainValid',
        'Empty',
        'BrokenAt',
        'ForkDetected',
        'Reason',
      ])
      assert.match(result.stderr, /containers verified: all valid/)
    })

    it('verify --scope K --record ID: one verdict; a tampered store exits 1 with BrokenAt', async () => {
      const one = await cli(['verify', '--scope', 'beta', '--record', R(3), ...store])
      assert.equal(one.code, 0, one.stderr)
      assert.deepEqual(
        lines(one.stdout).map((v) => [v['ScopeKey'], v['Valid'], v['ChainValid']]),
        [['beta', true, true]],
      )
      const db = await openRawDatabase(server)
      try {
        await db.run("UPDATE ledger_records SET user_id = 'acc_mallory' WHERE workspace_id = ? AND container_id = ? AND seq = 4", [
          server.workspace.id,
          containerIdForScope('beta'),
        ])
      } finally {
        await db.close()
      }
      const tampered = await cli(['verify', '--scope', 'beta', ...store])
      assert.equal(tampered.code, 1)
      assert.deepEqual(
        lines(tampered.stdout).map((v) => [v['ChainValid'], v['BrokenAt'], String(v['Reason']).split(':')[0]]),
        [[false, R(4), 'DIGEST_MISMATCH']],
      )
      assert.match(tampered.stderr, /1 NOT valid/)
      const all = await cli(['verify', ...store])
      assert.equal(all.code, 1)
      const bad = await cli(['verify', '--record', '4', '--scope', 'beta', ...store])
      assert.equal(bad.code, 2)
      assert.match(bad.stderr, /RecordID must be exactly 12 digits/)
    })

    it('verify-export: a JSON and a CSV export verify offline with the key from the well-known URL, the vkey text, or a file', async () => {
      for (const format of ['json', 'csv'] as const) {
        const exported = await server.api('GET', `/oi-api/provenance/events/export?scopeKey=alpha&format=${format}`, { token: editor })
        assert.equal(exported.status, 200)
        const file = join(dir, `alpha-${backend}.${format}`)
        writeFileSync(file, exported.text)
        const url = `${server.baseUrl}/.well-known/provenant/activity-log-key`
        // The offline tool's real process (exit code, nothing but the verdict on stdout) does not
        // depend on the store the file came from: spawned for the first backend, in process after.
        const run = backend === BACKENDS[0] ? runCli : cli
        const byUrl = await run(['verify-export', file, '--public-key', url])
        assert.equal(byUrl.code, 0, byUrl.stderr + byUrl.stdout)
        const [v] = lines(byUrl.stdout)
        assert.deepEqual([v!['Valid'], v!['ChainValid'], v!['Empty'], v!['BrokenAt'], v!['ForkDetected']], [null, true, false, null, false])
        assert.match(
          String(v!['Reason']),
          /^OK: 6 records verified \(000000000001 to 000000000006\); all records are covered by a signed checkpoint \(size 6\)$/,
        )
        assert.deepEqual((v!['Export'] as Record<string, unknown>)['seal'], 'valid')
        const vkey = ((await (await fetch(url)).json()) as { verifierKey: string }).verifierKey
        if (format === 'json') {
          // The other ways of giving the key (CLI start-up is slow on a busy machine: once is enough).
          const keyFile = join(dir, 'key.txt')
          writeFileSync(keyFile, `${vkey}\n`)
          assert.equal((await cli(['verify-export', file, '--public-key', keyFile])).code, 0)
          const noKey = await cli(['verify-export', file])
          assert.equal(noKey.code, 0)
          assert.match(noKey.stderr, /warning: no --public-key given/)
          const otherKey = await cli(['verify-export', file, '--public-key', testKey('someone else').signer.vkey])
          assert.equal(otherKey.code, 1, 'a file not signed by the key the auditor trusts is not valid')
        }
        // One edited record: exit 1 with the record as BrokenAt.
        const edited = join(dir, `alpha-edited-${backend}.${format}`)
        writeFileSync(edited, exported.text.replace('B-4', 'B-X'))
        const bad = await cli(['verify-export', edited, '--public-key', vkey])
        assert.equal(bad.code, 1)
        const [b] = lines(bad.stdout)
        assert.deepEqual([b!['ChainValid'], b!['BrokenAt']], [false, R(4)])

        // A file that is not an export at all: one verdict line saying so, exit 1.
        const garbage = join(dir, `alpha-garbage-${backend}.${format}`)
        writeFileSync(garbage, 'this is not an activity-log export\n')
        const malformed = await cli(['verify-export', garbage, '--public-key', vkey])
        assert.equal(malformed.code, 1, malformed.stderr)
        const [m] = lines(malformed.stdout)
        assert.deepEqual([m!['Valid'], m!['ChainValid'], (m!['Export'] as { file: string }).file], [null, false, garbage])
        assert.match(String(m!['Reason']), /^MALFORMED: /)
      }
    })

    it('any single-character edit anywhere in an exported file makes it fail offline (JSON and CSV)', async () => {
      const vkey = parseVerifierKey(
        ((await (await fetch(`${server.baseUrl}/.well-known/provenant/activity-log-key`)).json()) as { verifierKey: string }).verifierKey,
      )
      for (const format of ['json', 'csv'] as const) {
        const text = (await server.api('GET', `/oi-api/provenance/events/export?scopeKey=alpha&format=${format}`, { token: editor })).text
        assert.ok(isExportValid(await verifyExport([text], { trustedKeys: [vkey] })))
        let tried = 0
        // Every 10th character, replaced by a different one; the two backends' runs start 5 apart,
        // so together they edit every 5th position of the (same-format) export.
        for (let i = backend === 'sqlite' ? 0 : 5; i < text.length; i += 10) {
          const c = text[i]!
          const replacement = /[0-9]/.test(c)
            ? String((Number(c) + 1) % 10)
            : /[a-f]/.test(c)
              ? c === 'f'
                ? 'a'
                : String.fromCharCode(c.charCodeAt(0) + 1)
              : c === 'x'
                ? 'y'
                : 'x'
          const edited = text.slice(0, i) + replacement + text.slice(i + 1)
          tried++
          let ok: boolean
          try {
            ok = isExportValid(await verifyExport([edited], { trustedKeys: [vkey] }))
          } catch {
            ok = false
          }
          assert.equal(
            ok,
            false,
            `${format}: editing position ${i} (${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))}) went unnoticed`,
          )
        }
        assert.ok(tried > 150, `only ${tried} edits`)
        // Whole-line edits: a record deleted, two records swapped, the trailer cut off.
        const rows = text.split(format === 'json' ? '\n' : '\r\n')
        const recordRows = rows
          .map((r, i) => [r, i] as const)
          .filter(([r]) => (format === 'json' ? /^,?\{"RecordID"/.test(r) : r.startsWith('record,')))
        const without = rows.filter((_, i) => i !== recordRows[2]![1]).join(format === 'json' ? '\n' : '\r\n')
        const swapped = [...rows]
        ;[swapped[recordRows[2]![1]], swapped[recordRows[3]![1]]] = [rows[recordRows[3]![1]]!, rows[recordRows[2]![1]]!]
        for (const variant of [without, swapped.join(format === 'json' ? '\n' : '\r\n'), text.slice(0, text.length - 200)]) {
          let ok: boolean
          try {
            ok = isExportValid(await verifyExport([variant], { trustedKeys: [vkey] }))
          } catch {
            ok = false
          }
          assert.equal(ok, false)
        }
      }
    })
  })
}
