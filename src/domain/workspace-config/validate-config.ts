/**
 * @module
 * Validates a configuration document as a whole: the schema, then every cross-reference. All
 * problems are reported at once, each with its path in the document, so an operator can fix a file
 * in one pass.
 */
import type { z } from 'zod'
import { InvalidInputError } from '../errors.js'
import { RESERVED_COLUMNS, type WorkspaceConfig, workspaceConfigSchema } from './config-document.js'

/** Formats a document path as `connections[1].columns[0].type`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`
  return out || '(document)'
}

function zodProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
}

function duplicates<T>(items: readonly T[], key: (item: T) => string, where: string, what: string, problems: string[]): void {
  const seen = new Map<string, number>()
  items.forEach((item, index) => {
    const k = key(item)
    const first = seen.get(k)
    if (first !== undefined) problems.push(`${where}[${index}]: ${what} "${k}" is already used by ${where}[${first}]`)
    else seen.set(k, index)
  })
}

function crossReferenceProblems(config: WorkspaceConfig): string[] {
  const problems: string[] = []
  duplicates(config.connections, (c) => c.lookup, 'connections', 'lookup', problems)
  duplicates(config.connections, (c) => c.table, 'connections', 'table name', problems)
  duplicates(config.surfaces, (s) => s.lookup, 'surfaces', 'lookup', problems)
  duplicates(config.warmQueries, (q) => q.lookup, 'warmQueries', 'lookup', problems)
  duplicates(config.reasonCategories, (r) => r.id, 'reasonCategories', 'id', problems)

  config.connections.forEach((connection, i) => {
    const where = `connections[${i}]`
    // SQLite column names are case-insensitive, so `Temp` and `temp` would be one column there.
    duplicates(connection.columns, (c) => c.name.toLowerCase(), `${where}.columns`, 'column name (case-insensitive)', problems)
    connection.columns.forEach((column, j) => {
      if ((RESERVED_COLUMNS as readonly string[]).includes(column.name.toLowerCase())) {
        problems.push(`${where}.columns[${j}].name: "${column.name}" is reserved for the row id and ingestion time`)
      }
    })
    const timestamp = connection.columns.find((c) => c.name === 'timestamp')
    if (!timestamp) problems.push(`${where}.columns: a connection needs a column named "timestamp" of type datetime`)
    else if (timestamp.type !== 'datetime')
      problems.push(`${where}.columns: the "timestamp" column must be datetime, not ${timestamp.type}`)
  })

  const connectionLookups = new Set(config.connections.map((c) => c.lookup))
  config.surfaces.forEach((surface, i) => {
    surface.connections.forEach((lookup, j) => {
      if (!connectionLookups.has(lookup)) problems.push(`surfaces[${i}].connections[${j}]: no connection has the lookup "${lookup}"`)
    })
  })

  // A warm query is addressed by its lookup or its API path (spec 2.1): the two must never clash.
  const addresses = new Map<string, string>()
  config.warmQueries.forEach((query, i) => {
    for (const [kind, address] of [
      ['lookup', query.lookup],
      ['path', query.path],
    ] as const) {
      if (address === undefined) continue
      const owner = addresses.get(address)
      if (owner !== undefined && !(kind === 'path' && owner === `warmQueries[${i}].lookup`)) {
        problems.push(`warmQueries[${i}].${kind}: "${address}" already addresses ${owner.replace(/\.(lookup|path)$/, '')}`)
      } else addresses.set(address, `warmQueries[${i}].${kind}`)
    }
  })

  const categories = new Set(config.reasonCategories.map((r) => r.id))
  config.settings.amendments.approvalRequiredFor?.reasonCategories?.forEach((id, i) => {
    if (!categories.has(id))
      problems.push(`settings.amendments.approvalRequiredFor.reasonCategories[${i}]: "${id}" is not in reasonCategories`)
  })
  return problems
}

/**
 * Parses and checks a configuration document. Throws InvalidInputError listing every problem as
 * `path: message`; returns the document with defaults filled in.
 */
export function validateConfig(document: unknown): WorkspaceConfig {
  const parsed = workspaceConfigSchema.safeParse(document ?? {})
  if (!parsed.success) throw configError(zodProblems(parsed.error))
  const problems = crossReferenceProblems(parsed.data)
  if (problems.length > 0) throw configError(problems)
  return parsed.data
}

function configError(problems: readonly string[]): InvalidInputError {
  const shown = problems.slice(0, 50)
  const more = problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more` : ''
  return new InvalidInputError(`the configuration document is invalid:\n  ${shown.join('\n  ')}${more}`)
}
