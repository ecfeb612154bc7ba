/**
 * Two API processes on one PostgreSQL database appending to one container at once (issue 4, item 8;
 * design §2, §8): appends are serialised in the database (a transaction-level advisory lock per
 * container), never in process memory, so the two processes' group commits interleave whole
 * batches and the chain stays one valid chain with gap-free RecordIDs.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { BACKENDS } from '../support/backends.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Starts `provenant serve` in its own process and resolves with its base URL. */
function serveProcess(dataDir: string, databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--data', dataDir, '--database-url', databaseUrl],
      {
        cwd: ROOT,
        env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}${err}`)), 60_000)
    child.stdout!.on('data', (d) => {
      out += d
      const m = /running at (http:\/\/[^\s]+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ child, url: m[1]! })
      }
    })
    child.stderr!.on('data', (d) => {
      err += d
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}: ${out}${err}`))
    })
  })
}

describe('postgres: two processes appending to one container', {
  skip: !BACKENDS.includes('postgres') && 'PostgreSQL not reachable',
}, () => {
  let seed: TestServer
  const processes: ChildProcess[] = []
  const urls: string[] = []
  let token: string

  before(async () => {
    // Creates the database, workspace, accounts and keys; the two processes share its data directory
    // (so they sign with the same checkpoint key, as every process of one server must).
    seed = await startTestServer('postgres')
    token = await seed.token('editor')
    const started = await Promise.all([0, 1].map(() => serveProcess(seed.config.dataDir, seed.config.databaseUrl!)))
    for (const s of started) {
      processes.push(s.child)
      urls.push(s.url)
    }
  })
  after(async () => {
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve()
            child.once('exit', () => resolve())
            child.kill('SIGTERM')
          }),
      ),
    )
    await seed.stop()
  })

  it('ends with one valid chain and gap-free RecordIDs', async () => {
    const perProcess = 120
    const concurrency = 12
    const append = async (url: string, i: number) => {
      const response = await fetch(`${url}/oi-api/provenance/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          ScopeKey: 'shared-line',
          entityType: 'reading',
          entityId: `${url}#${i}`,
          actionType: 'append',
          details: { i },
        }),
      })
      const text = await response.text()
      assert.equal(response.status, 200, text)
      return (JSON.parse(text) as { RecordID: string }).RecordID
    }
    const ids: string[] = []
    await Promise.all(
      urls.flatMap((url) =>
        Array.from({ length: concurrency }, async (_, worker) => {
          for (let i = worker; i < perProcess; i += concurrency) ids.push(await append(url, i))
        }),
      ),
    )
    const total = perProcess * urls.length
    assert.equal(ids.length, total)
    assert.deepEqual(
      [...ids].sort(),
      Array.from({ length: total }, (_, i) => String(i + 1).padStart(12, '0')),
      'every RecordID once, none missing',
    )

    for (const url of urls) {
      const response = await fetch(`${url}/oi-api/provenance/events/verify`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await seed.token('analyst')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ScopeKey: 'shared-line' }),
      })
      const verdict = (await response.json()) as Record<string, unknown>
      assert.deepEqual(verdict, {
        Valid: null,
        ChainValid: true,
        Empty: false,
        BrokenAt: null,
        ForkDetected: false,
        Reason: `OK: ${total} records verified (000000000001 to ${String(total).padStart(12, '0')}); all records are covered by a signed checkpoint (size ${total})`,
      })
    }
    // The Platform-Config records both processes wrote at the same time (one per call) form one chain too.
    const platform = await seed.api('POST', '/oi-api/provenance/events/verify', { token: await seed.token('analyst'), body: {} })
    assert.equal(platform.body.ChainValid, true, platform.body.Reason)
    const heads = await seed.services.ledger.verify({ container: { workspaceId: seed.workspace.id, containerId: 'heads' } })
    assert.ok(heads.kind === 'verdict' && heads.verdict.ChainValid, JSON.stringify(heads))
  })
})
