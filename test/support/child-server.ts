/**
 * @module
 * Real `provenant serve` child processes (from source, through tsx) for the scale suites: a
 * deployment seeded in-process (workspace, accounts, configuration, tokens; then closed), and
 * servers started on it, stopped with SIGTERM or killed with SIGKILL, and restarted on the same data
 * directory / database.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Backend } from './backends.js'
import { createTestDatabase, dropWhenDone } from './backends.js'
import type { JsonBody } from './json-body.js'
import { startTestServer, TEST_ROLES } from './test-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export type RoleName = (typeof TEST_ROLES)[number]

export interface Deployment {
  readonly backend: Backend
  readonly dataDir: string
  readonly databaseUrl: string | undefined
  readonly workspaceId: string
  /** One token per role (valid 24 h), minted while seeding. */
  readonly tokens: Readonly<Record<RoleName, string>>
  /** Removes the data directory and drops the database. */
  cleanup(): Promise<void>
}

/** Creates a data directory (and for PostgreSQL a fresh database), a workspace with one account per role, applies `config`, mints tokens. */
export async function seedDeployment(backend: Backend, config: unknown): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-scale-'))
  const database = backend === 'postgres' ? await createTestDatabase() : undefined
  const seed = await startTestServer(backend, { dataDir, ...(database ? { databaseUrl: database.url } : {}) })
  try {
    const admin = seed.accounts.admin
    await seed.services.config.apply(seed.workspace.id, { accountId: admin.id, accountName: admin.name, role: 'admin' }, config)
    const tokens = {} as Record<RoleName, string>
    for (const role of TEST_ROLES) tokens[role] = await seed.token(role, { expires: '24h' })
    return {
      backend,
      dataDir,
      databaseUrl: database?.url,
      workspaceId: seed.workspace.id,
      tokens,
      async cleanup() {
        if (database) await dropWhenDone(database)
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } finally {
    await seed.runtime.close()
  }
}

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ChildServer {
  readonly url: string
  readonly pid: number
  readonly child: ChildProcess
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string
  /** Settles when the process has exited. */
  readonly exited: Promise<Exit>
  /** Sends a signal and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<Exit>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * The environment of a child server whose suite runs a query at a time: one query worker (and the
 * pool's spare) instead of two, as test servers have (test-server.ts says why). The soak keeps the
 * deployment default.
 */
export const ONE_QUERY_WORKER: Readonly<Record<string, string>> = { PROVENANT_QUERY_WORKERS: '1' }

/** Starts `provenant serve` on the deployment and resolves once it listens. */
export async function startChildServer(
  deployment: Pick<Deployment, 'dataDir' | 'databaseUrl'>,
  options: { env?: Record<string, string> } = {},
): Promise<ChildServer> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const args = [
    '--import',
    'tsx',
    'src/cli/main.ts',
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--public-url',
    url,
    '--data',
    deployment.dataDir,
  ]
  if (deployment.databaseUrl) args.push('--database-url', deployment.databaseUrl)
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => {
    out += d
  })
  child.stderr!.on('data', (d) => {
    out += d
  })
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      // the caller gets no handle to a server that did not start: stop it here, or it outlives the run
      child.kill('SIGKILL')
      reject(new Error(`server did not start within 60 s: ${out}`))
    }, 60_000)
    const onData = (): void => {
      if (!/Provenant is running at/.test(out)) return
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      resolve()
    }
    child.stdout!.on('data', onData)
    void exited.then((exit) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${exit.code ?? exit.signal}) before listening: ${out}`))
    })
  })
  return {
    url,
    pid: child.pid!,
    child,
    output: () => out,
    exited,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

/** Resident set size (bytes) and open file descriptors of a process (Linux /proc). */
export function processUsage(pid: number): { rss: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0)
  let fds = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      readlinkSync(`/proc/${pid}/fd/${fd}`)
      fds++
    } catch {
      // closed while listing
    }
  }
  return { rss: kb * 1024, fds }
}

export interface Reply {
  readonly status: number
  readonly text: string
  readonly body: JsonBody
}

/** A real fetch against a child server, JSON in and out. */
export async function call(
  url: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const h: Record<string, string> = { ...headers }
  if (token) h['authorization'] = `Bearer ${token}`
  let payload: string | undefined
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body)
    h['content-type'] ??= 'application/json'
  }
  const response = await fetch(`${url}${path}`, { method, headers: h, ...(payload !== undefined ? { body: payload } : {}) })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  return { status: response.status, text, body: parsed }
}
