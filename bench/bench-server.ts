/**
 * @module
 * What the benchmark scenarios that run the real server (createRuntime, as `provenant serve`
 * composes it) set up the same way: the runtime on a data directory, a scratch PostgreSQL database,
 * the bench admin with a configuration, tokens, and the three-column push connection.
 */
import pg from 'pg'
import type { Logger } from 'pino'
import { loadConfig } from '../src/config/config.js'
import { createRuntime, type Runtime } from '../src/main.js'

type Services = Runtime['services']
type Account = { readonly id: string; readonly name: string }
type Configuration = Parameters<Services['config']['apply']>[2]

/** Cheap password hashing: no scenario measures sign-in, and the default cost would slow set-up. */
const BENCH_SCRYPT_COST = { log2N: 10, r: 8, p: 1 }

/** The real runtime on `data`: SQLite there, or PostgreSQL at `databaseUrl`; `env` as the process environment. */
export function createBenchRuntime(
  data: string,
  logger: Logger,
  options: { readonly databaseUrl?: string | undefined; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<Runtime> {
  const { databaseUrl, env = {} } = options
  return createRuntime(loadConfig({ data, port: 0, ...(databaseUrl ? { databaseUrl } : {}) }, env), {
    logger,
    scryptCost: BENCH_SCRYPT_COST,
  })
}

/** A token of `account` in the workspace, issued by `createdBy` (the account itself unless said). */
export async function issueBenchToken(
  services: Services,
  workspaceId: string,
  account: Account,
  options: { readonly name?: string; readonly expires?: string; readonly createdBy?: Account } = {},
): Promise<string> {
  const createdBy = options.createdBy ?? account
  const { token } = await services.access.createToken({
    workspaceId,
    accountId: account.id,
    name: options.name ?? 'bench',
    expires: options.expires ?? '1h',
    createdBy: { id: createdBy.id, name: createdBy.name },
  })
  return token
}

/** Applies a configuration to the workspace as its admin. */
export async function applyAsAdmin(services: Services, workspaceId: string, admin: Account, configuration: Configuration): Promise<void> {
  await services.config.apply(workspaceId, { accountId: admin.id, accountName: admin.name, role: 'admin' }, configuration)
}

/** The bench admin (with a password, so the portal can sign in) of a new workspace `bench`, with `configuration` applied. */
export async function benchWorkspace(services: Services, configuration: Configuration): Promise<{ workspaceId: string; admin: Account }> {
  const workspace = await services.admin.createWorkspace('bench')
  const admin = await services.admin.addAccount({
    name: 'bench-admin@bench',
    role: 'admin',
    workspaceId: workspace.id,
    password: 'bench-admin-password',
  })
  await applyAsAdmin(services, workspace.id, admin, configuration)
  return { workspaceId: workspace.id, admin }
}

/** A push connection of timestamped sensor values: `lookup` feeding the KQL table `table`. */
export function sensorConnection(lookup: string, table: string) {
  return {
    lookup,
    kind: 'push',
    table,
    columns: [
      { name: 'timestamp', type: 'datetime' },
      { name: 'sensor', type: 'string' },
      { name: 'value', type: 'real' },
    ],
  } as const
}

/**
 * A new PostgreSQL database `name` on the server of `adminUrl` (dropped first if a run left it), and
 * how to drop it. With `template`, a file copy of that database (a cached dataset a scenario must
 * not change); PostgreSQL refuses the copy while anyone is connected to the template, so it is
 * retried for a while.
 */
export async function scratchDatabase(
  adminUrl: string,
  name: string,
  options: { readonly template?: string } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const run = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  if (options.template === undefined) await run(`CREATE DATABASE ${name}`)
  else {
    const deadline = Date.now() + 60_000
    for (;;) {
      try {
        await run(`CREATE DATABASE ${name} TEMPLATE ${options.template} STRATEGY FILE_COPY`)
        break
      } catch (error) {
        // 55006 object_in_use: a session on the template (another bench, a pool closing)
        if ((error as { code?: string }).code !== '55006' || Date.now() > deadline) throw error
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}
