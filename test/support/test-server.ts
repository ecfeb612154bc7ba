/**
 * @module
 * Starts a real server for a test: the real composition (createRuntime), a fresh data directory and,
 * for PostgreSQL, a fresh database; listening on a free loopback port. Seeds a workspace with one
 * account per role, and offers `api()` (real fetch, with the response contract check) and `token()`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LEDGER_KEY_FILE } from '../../src/adapters/keys/ledger-key.js'
import { keysDirOf } from '../../src/adapters/keys/server-identity.js'
import { type Config, loadConfig } from '../../src/config/config.js'
import type { Account } from '../../src/domain/access/access-store.js'
import type { TokenScopes } from '../../src/domain/access/caller.js'
import type { Role } from '../../src/domain/access/rights.js'
import type { Services } from '../../src/domain/services.js'
import type { Stores } from '../../src/domain/stores.js'
import type { Workspace } from '../../src/domain/workspaces/workspace.js'
import { createLogger } from '../../src/logging.js'
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/main.js'
import type { Clock } from '../../src/shared/clock.js'
import type { Backend } from './backends.js'
import { createTestDatabase, dropWhenDone, type TestDatabase } from './backends.js'
import { ContractChecker } from './contract.js'
import type { JsonBody } from './json-body.js'

/** Fast password hashing for tests (production uses N = 2^17). */
export const TEST_SCRYPT = { log2N: 10, r: 8, p: 1 } as const

export const TEST_ROLES = ['viewer', 'analyst', 'editor', 'approver', 'admin'] as const satisfies readonly Role[]

export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed JSON body (undefined when not JSON). */
  readonly body: JsonBody
}

export interface ApiOptions {
  readonly token?: string | undefined
  readonly body?: unknown
  /** Raw body text, sent as is (for malformed JSON tests). */
  readonly rawBody?: string
  readonly headers?: Record<string, string>
  /** Skip the OpenAPI contract check (for deliberately odd requests). */
  readonly unchecked?: boolean
}

export interface TestServer {
  readonly backend: Backend
  readonly baseUrl: string
  readonly config: Config
  readonly runtime: Runtime
  readonly services: Services
  /** Raw storage, for tests that play the attacker with database access or check what was stored. */
  readonly stores: Stores
  readonly workspace: Workspace
  /** One account per role, named after it (`viewer`, `analyst`, `editor`, `approver`, `admin`). */
  readonly accounts: Readonly<Record<(typeof TEST_ROLES)[number], Account>>
  /** Lines the server logged (JSON strings), for leak checks. */
  readonly logLines: string[]
  token(
    account: Account | (typeof TEST_ROLES)[number],
    options?: { rights?: string[]; scopes?: TokenScopes; expires?: string; workspaceId?: string },
  ): Promise<string>
  api(method: string, path: string, options?: ApiOptions): Promise<ApiResponse>
  stop(): Promise<void>
}

export interface StartOptions {
  readonly clock?: Clock
  /** Reuse a PostgreSQL database (multi-process tests); created and dropped by the caller. */
  readonly databaseUrl?: string
  readonly dataDir?: string
  readonly workspaceName?: string
  /** Overrides of the loaded configuration (e.g. an export bucket). */
  readonly config?: Partial<Config>
  /** Pull connectors' timings (shorter backoff and lease retry in tests). */
  readonly connectors?: RuntimeOptions['connectors']
}

/** The activity-log signing key of each database a test server has used (one deployment, one key). */
const SIGNING_KEY_OF_DATABASE = new Map<string, string>()

export async function startTestServer(backend: Backend, options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'provenant-test-'))
  const database: TestDatabase | undefined = backend === 'postgres' && !options.databaseUrl ? await createTestDatabase() : undefined
  const databaseUrl = backend === 'postgres' ? (options.databaseUrl ?? database!.url) : undefined
  const logLines: string[] = []
  // The server's own logger (redaction and secret scrubbing included), writing into logLines.
  const logger = createLogger('info', {
    write: (line: string) => {
      logLines.push(line)
    },
  })
  // The suites run several servers side by side on one machine: a niced query worker would yield to
  // the other servers' event loops, which is no deployment's situation (the priority has its own
  // test, test/adapters/query-worker-priority.test.ts, and the hostile-queries benchmark).
  // One query worker (and the pool's spare) instead of two: each is a thread that loads the KQL
  // engine through tsx, about 0.7 s of CPU at every server start, and most suites run a query at a
  // time (one per account is the default limit anyway). Suites about capacity configure their own.
  const loaded = loadConfig({ data: dataDir, port: 0, ...(databaseUrl ? { databaseUrl } : {}) }, {})
  // Servers on one database are one deployment: they share the activity log's signing key, as
  // docs/deployment.md requires (a checkpoint signed by another key is refused as not covered).
  const sharedKey = databaseUrl ? SIGNING_KEY_OF_DATABASE.get(databaseUrl) : undefined
  const config = {
    ...loaded,
    queryCapacity: { workerNice: 0, workers: 1, ...loaded.queryCapacity },
    ...(sharedKey ? { ledgerSigningKey: sharedKey } : {}),
    ...options.config,
  }
  const runtime = await createRuntime(config, {
    logger,
    scryptCost: TEST_SCRYPT,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.connectors ? { connectors: options.connectors } : {}),
  })
  if (databaseUrl && !SIGNING_KEY_OF_DATABASE.has(databaseUrl) && !config.ledgerSigningKey) {
    const keyFile = join(keysDirOf(dataDir), LEDGER_KEY_FILE)
    if (existsSync(keyFile)) SIGNING_KEY_OF_DATABASE.set(databaseUrl, readFileSync(keyFile, 'utf8').trim())
  }
  const address = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  const services = runtime.services

  const workspace =
    (await services.admin.listWorkspaces()).find((w) => w.name === (options.workspaceName ?? 'acme')) ??
    (await services.admin.createWorkspace(options.workspaceName ?? 'acme'))
  const accounts = {} as Record<(typeof TEST_ROLES)[number], Account>
  for (const role of TEST_ROLES) {
    const name = `${role}@${workspace.name}`
    accounts[role] =
      (await runtime.stores.access.accountByName(name)) ??
      (await services.admin.addAccount({ name, role, workspaceId: workspace.id, password: `${role}-password-123` }))
  }

  async function token(
    account: Account | (typeof TEST_ROLES)[number],
    opts: { rights?: string[]; scopes?: TokenScopes; expires?: string; workspaceId?: string } = {},
  ): Promise<string> {
    const owner = typeof account === 'string' ? accounts[account] : account
    const created = await services.access.createToken({
      workspaceId: opts.workspaceId ?? workspace.id,
      accountId: owner.id,
      name: 'test token',
      expires: opts.expires ?? '1h',
      ...(opts.rights ? { rights: opts.rights } : {}),
      ...(opts.scopes ? { scopes: opts.scopes } : {}),
      createdBy: { id: owner.id, name: owner.name },
    })
    return created.token
  }

  let contract: ContractChecker | undefined
  async function contractChecker(): Promise<ContractChecker> {
    if (!contract) {
      const response = await fetch(`${address}/oi-api/openapi`, { headers: { authorization: `Bearer ${await token('admin')}` } })
      contract = new ContractChecker((await response.json()) as Record<string, unknown>)
    }
    return contract
  }

  async function api(method: string, path: string, opts: ApiOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) }
    if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`
    let body: string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) body = JSON.stringify(opts.body)
    if (body !== undefined) headers['content-type'] ??= 'application/json'
    const request = () => fetch(`${address}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) })
    const response = await request().catch((error: unknown) => {
      // A kept-alive connection the server closed for idleness (72 s) just as the client reused it
      // is reset; HTTP lets a client repeat an idempotent request then (RFC 9110 §9.2.2), as
      // browsers do. Seen between suites that leave the server idle for minutes on a loaded machine.
      const code = (error as { cause?: { code?: string } }).cause?.code
      if ((method === 'GET' || method === 'HEAD') && code === 'ECONNRESET') return request()
      throw error
    })
    const text = await response.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    if (!opts.unchecked && path.startsWith('/oi-api/')) {
      ;(await contractChecker()).check(method, path.split('?')[0]!, response.status, response.headers.get('content-type'), parsed)
    }
    return { status: response.status, headers: response.headers, text, body: parsed }
  }

  return {
    backend,
    baseUrl: address,
    config,
    runtime,
    services,
    stores: runtime.stores,
    workspace,
    accounts,
    logLines,
    token,
    api,
    async stop() {
      await runtime.close()
      if (database) await dropWhenDone(database)
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Asserts the spec's error envelope and returns its message. */
export function errorMessage(response: ApiResponse): string {
  const body = response.body as { HasError?: unknown; Messages?: { Error?: unknown } } | undefined
  if (body?.HasError !== true || typeof body.Messages?.Error !== 'string' || Object.keys(body).length !== 2) {
    throw new Error(`expected the error envelope, got ${response.status} ${response.text.slice(0, 300)}`)
  }
  return body.Messages.Error
}
