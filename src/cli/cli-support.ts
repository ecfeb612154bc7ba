/**
 * @module
 * Shared pieces of the CLI: argument parsing with per-command help, errors in words, and opening
 * the services on the configured store.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { type Config, loadConfig } from '../config/config.js'
import { DomainError } from '../domain/errors.js'
import type { CliServices } from '../domain/services.js'
import type { Workspace } from '../domain/workspaces/index.js'
import { createServices } from '../main.js'

/** A usage mistake: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

export const STORE_OPTIONS = {
  data: { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

export interface Command {
  readonly name: string
  readonly summary: string
  readonly usage: string
  run(argv: string[]): Promise<void>
}

export function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, positionals = true) {
  try {
    return parseArgs({ args: argv, options: { ...STORE_OPTIONS, ...options }, allowPositionals: positionals, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

export function configFrom(values: { data?: string | boolean; 'database-url'?: string | boolean }): Config {
  return loadConfig({
    ...(typeof values.data === 'string' ? { data: values.data } : {}),
    ...(typeof values['database-url'] === 'string' ? { databaseUrl: values['database-url'] } : {}),
  })
}

/** Opens the services for one command and always closes the store afterwards. */
export async function withServices<T>(config: Config, fn: (services: CliServices) => Promise<T>): Promise<T> {
  const handle = await createServices(config)
  try {
    return await fn(handle.services)
  } finally {
    await handle.close()
  }
}

/** The workspace named by --workspace, or the only one when there is exactly one. */
export async function resolveWorkspace(services: CliServices, name: string | undefined): Promise<Workspace> {
  if (name !== undefined) return services.admin.workspaceByName(name)
  const all = await services.admin.listWorkspaces()
  if (all.length === 1) return all[0]!
  if (all.length === 0) throw new UsageError('there is no workspace yet; create one with `provenant workspace create NAME`')
  throw new UsageError(`several workspaces exist (${all.map((w) => w.name).join(', ')}); say which with --workspace NAME`)
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Renders rows as an aligned text table. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

export function describeError(error: unknown): string {
  if (error instanceof DomainError || error instanceof UsageError) return error.message
  if (error instanceof Error && 'code' in error && (error as { code?: string }).code === 'ECONNREFUSED') {
    return `cannot reach the database (${error.message})`
  }
  return error instanceof Error ? error.message : String(error)
}
