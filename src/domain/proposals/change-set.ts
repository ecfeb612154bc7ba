/**
 * @module
 * A proposal's change set (issue 8): what it changes in the workspace configuration, how it applies
 * to a document, and whether it still applies cleanly after the configuration moved. Warm queries
 * come first; connections and surfaces follow by adding an entity to PROPOSAL_ENTITIES, its change
 * shapes to the schema and its handler to ENTITY_HANDLERS (the `satisfies` makes a missing handler a
 * compile error).
 */
import { z } from 'zod'
import { deepEqual } from '../../shared/deep-equal.js'
import { API_PATH_RE, LOOKUP_RE, type WarmQueryConfig, type WorkspaceConfig } from '../workspace-config/index.js'

export const PROPOSAL_ENTITIES = ['warmQuery'] as const
export type ProposalEntity = (typeof PROPOSAL_ENTITIES)[number]

/** Longest KQL text a proposal may carry (the same limit as the configuration document). */
export const MAX_PROPOSED_QUERY_LENGTH = 100_000
/** Changes one proposal may carry. */
export const MAX_CHANGES = 20

const lookup = z.string().regex(LOOKUP_RE, 'a lookup is 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit')
const path = z
  .string()
  .regex(
    API_PATH_RE,
    'an API path is slash-separated segments of letters, digits, dots, dashes or underscores, e.g. plant/line-1/hourly-temp',
  )
const description = z.string().max(2000, 'a description is at most 2000 characters')
const kql = z
  .string()
  .trim()
  .min(1, 'the KQL text is empty')
  .max(MAX_PROPOSED_QUERY_LENGTH, `the KQL text is at most ${MAX_PROPOSED_QUERY_LENGTH} characters`)

const createWarmQuery = z.strictObject({
  entity: z.literal('warmQuery'),
  action: z.literal('create'),
  lookup: lookup.describe('Lookup of the new warm query (unique in the workspace).'),
  query: kql.describe('The KQL text to save.'),
  path: path.optional().describe('Optional API path under which the query is also reachable, e.g. plant/line-1/hourly-temp.'),
  description: description.optional().describe('What the query answers, for the people and models who will run it.'),
})

const updateWarmQuery = z
  .strictObject({
    entity: z.literal('warmQuery'),
    action: z.literal('update'),
    lookup: lookup.describe('Lookup of the existing warm query to change.'),
    query: kql.optional().describe('New KQL text (omit to keep the current text).'),
    path: path.nullable().optional().describe('New API path; null removes it; omit to keep it.'),
    description: description.nullable().optional().describe('New description; null removes it; omit to keep it.'),
  })
  .refine((c) => c.query !== undefined || c.path !== undefined || c.description !== undefined, {
    message: 'an update must change at least one of query, path or description',
  })

const deleteWarmQuery = z.strictObject({
  entity: z.literal('warmQuery'),
  action: z.literal('delete'),
  lookup: lookup.describe('Lookup of the warm query to remove.'),
})

export const proposedChangeSchema = z.discriminatedUnion('action', [createWarmQuery, updateWarmQuery, deleteWarmQuery])

export type ProposedChange = z.output<typeof proposedChangeSchema>

/** The state of one entity in a document: its definition, or undefined when absent. */
type EntityState = Readonly<Record<string, unknown>> | undefined

interface EntityHandler {
  /** The entity as `document` has it (undefined when absent). */
  read(document: WorkspaceConfig, id: string): EntityState
  /** Applies one change; returns the new document or a problem a person can act on. */
  apply(document: WorkspaceConfig, change: ProposedChange): WorkspaceConfig | string
}

const warmQueryHandler: EntityHandler = {
  read: (document, id) => document.warmQueries.find((q) => q.lookup === id),
  apply(document, change) {
    const index = document.warmQueries.findIndex((q) => q.lookup === change.lookup)
    const queries = [...document.warmQueries]
    switch (change.action) {
      case 'create': {
        if (index >= 0) return `a warm query with the lookup "${change.lookup}" already exists; propose an update instead`
        const created: WarmQueryConfig = {
          lookup: change.lookup,
          ...(change.path !== undefined ? { path: change.path } : {}),
          ...(change.description !== undefined ? { description: change.description } : {}),
          query: change.query,
        }
        queries.push(created)
        break
      }
      case 'update': {
        if (index < 0) return `no warm query has the lookup "${change.lookup}"; propose a create instead`
        const { path: _path, description: _description, ...rest } = queries[index]!
        const path = change.path === undefined ? queries[index]!.path : (change.path ?? undefined)
        const description = change.description === undefined ? queries[index]!.description : (change.description ?? undefined)
        queries[index] = {
          ...rest,
          ...(path !== undefined ? { path } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(change.query !== undefined ? { query: change.query } : {}),
        }
        break
      }
      case 'delete':
        if (index < 0) return `no warm query has the lookup "${change.lookup}"`
        queries.splice(index, 1)
        break
    }
    return { ...document, warmQueries: queries }
  },
}

const ENTITY_HANDLERS = {
  warmQuery: warmQueryHandler,
} as const satisfies Record<ProposalEntity, EntityHandler>

/** The entity's key for duplicate detection and conflict messages, e.g. `warmQuery hourly`. */
export function changeKey(change: ProposedChange): string {
  return `${change.entity} ${change.lookup}`
}

/** The entity a change touches, as `document` has it. */
export function readEntity(document: WorkspaceConfig, change: ProposedChange): EntityState {
  const state = ENTITY_HANDLERS[change.entity].read(document, change.lookup)
  return state === undefined ? undefined : JSON.parse(JSON.stringify(state))
}

export interface AppliedChangeSet {
  readonly document: WorkspaceConfig
  /** `changes[i]: …` for every change that does not apply; empty when all do. */
  readonly problems: readonly string[]
}

/**
 * Applies the changes in order. Each entity may be touched once per change set (so a conflict is
 * always about one change). Does not validate the resulting document as a whole.
 */
export function applyChangeSet(document: WorkspaceConfig, changes: readonly ProposedChange[]): AppliedChangeSet {
  const problems: string[] = []
  const seen = new Map<string, number>()
  let next = document
  changes.forEach((change, i) => {
    const key = changeKey(change)
    const first = seen.get(key)
    if (first !== undefined) {
      problems.push(`changes[${i}]: ${key} is already changed by changes[${first}]; put everything about it in one change`)
      return
    }
    seen.set(key, i)
    const result = ENTITY_HANDLERS[change.entity].apply(next, change)
    if (typeof result === 'string') problems.push(`changes[${i}]: ${result}`)
    else next = result
  })
  return { document: next, problems }
}

/**
 * Why the change set no longer applies cleanly to `current`: for each change, the entity it touches
 * must be exactly as it was when the proposal was made (`before[i]`). Empty when it still applies.
 */
export function conflicts(current: WorkspaceConfig, changes: readonly ProposedChange[], before: readonly EntityState[]): string[] {
  const out: string[] = []
  changes.forEach((change, i) => {
    const now = readEntity(current, change)
    const then = before[i]
    if (deepEqual(now, then)) return
    const what = then === undefined ? 'was created' : now === undefined ? 'was removed' : 'was changed'
    out.push(`${changeKey(change)} ${what} after the proposal was made`)
  })
  return out
}
