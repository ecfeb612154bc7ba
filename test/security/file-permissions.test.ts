/**
 * Issue 14 item 9: file permissions. Whatever the umask (the server is started in a child process
 * under `umask 000`), the data directory the server creates and every directory in it are 0700,
 * and every file — the SQLite database and its -wal and -shm files, signing keys, the master key,
 * the download-URL key and export files — is 0600. An existing SQLite database (or -wal/-shm file)
 * readable or writable by group or others is refused at start, as master.key is, with the chmod to
 * run (docs/decisions.md).
 */
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { sqliteFileOf } from '../../src/adapters/open-stores.js'
import { BACKENDS } from '../support/backends.js'
import { runTypeScript } from '../support/cli.js'
import { startTestServer } from '../support/test-server.js'

const parents: string[] = []
after(() => {
  for (const dir of parents) rmSync(dir, { recursive: true, force: true })
})

for (const backend of BACKENDS) {
  describe(`${backend}: files 0600 and directories 0700 whatever the umask (issue 14 item 9)`, () => {
    it('under umask 000, the created data directory and everything in it are private', async () => {
      const parent = mkdtempSync(join(tmpdir(), 'provenant-perm-'))
      parents.push(parent)
      const dataDir = join(parent, 'new', 'data')
      const result = await runTypeScript(['test/support/permissions-child.ts', dataDir, backend], { umask: '000' })
      assert.equal(result.code, 0, result.stderr)
      const { umask, modes } = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { umask: string; modes: Record<string, string> }
      assert.equal(umask, '0', 'the child really ran under umask 000')
      const names = Object.keys(modes)
      if (backend === 'sqlite') for (const f of ['provenant.db', 'provenant.db-wal', 'provenant.db-shm']) assert.ok(names.includes(f), f)
      assert.ok(
        names.some((n) => n.startsWith('exports/') && n.endsWith('.csv')),
        `an export file: ${names}`,
      )
      assert.ok(
        names.some((n) => n.startsWith('keys/')),
        `signing keys: ${names}`,
      )
      assert.ok(names.includes('master.key'))
      const loose = Object.entries(modes).filter(([name, mode]) => (name.endsWith('/') ? mode !== '700' : mode !== '600'))
      assert.deepEqual(loose, [], 'files 0600, directories 0700')
      assert.equal(statSync(join(parent, 'new')).mode & 0o777, 0o700, 'a parent the server created is 0700 too')
    })

    if (backend === 'sqlite') {
      it('an existing database file readable by others is refused at start, with the chmod to run; 0600 starts', async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'provenant-perm-'))
        parents.push(dataDir)
        await (await startTestServer('sqlite', { dataDir })).stop()
        const file = sqliteFileOf(dataDir)
        for (const [target, mode] of [
          [file, 0o644],
          [file, 0o660],
        ] as const) {
          chmodSync(target, mode)
          await assert.rejects(
            startTestServer('sqlite', { dataDir }),
            (e: Error) =>
              e.message.includes(`chmod 600 ${file}*`) && e.message.includes(`0${mode.toString(8)}`) && /group or others/.test(e.message),
          )
        }
        chmodSync(file, 0o600)
        const server = await startTestServer('sqlite', { dataDir })
        await server.stop()
        assert.ok(existsSync(file))
      })
    }
  })
}
