/**
 * @module
 * What a token's scopes let it see of the change stream (issue 14 item 6; docs/decisions.md). A
 * token limited to some scope keys, connections or surfaces receives nothing about other scopes:
 *
 * - a correction only when its ScopeKey is in the token's scope keys and, for a data row
 *   (`row:<lookup>`), the connection is one the token may read: the corrections endpoints would
 *   refuse the rest, so their ids, ScopeKeys, entities and authors stay out of the stream;
 * - connection and credential changes only of connections the token may read;
 * - a configuration commit always (it is workspace-level), but for a token limited to some
 *   connections or surfaces its summary lists only the entries it may see (connections it may
 *   read, surfaces it may use that hold one of them), and says that others were left out.
 *
 * Tokens, accounts and proposals (which only touch warm queries) are workspace-level and reach
 * every token with `streams:changes`. An unscoped token sees every change unchanged, with no read.
 */
import { type Caller, connectionAllowed, inScope, surfaceAllowed } from '../access/index.js'
import type { WorkspaceChange } from '../changes/index.js'
import type { Stores } from '../stores.js'
import { type ConfigService, describeChanges } from '../workspace-config/index.js'

const ROW_PREFIX = 'row:'

export interface ChangeVisibilityDeps {
  readonly stores: Pick<Stores, 'corrections' | 'config'>
  readonly config: Pick<ConfigService, 'current'>
}

/** Whose view: the caller of the stream (its workspace and scopes). */
export type Viewer = Pick<Caller, 'workspaceId' | 'scopes'>

/** The change as this caller may see it, or undefined when it is about scopes outside the caller's. */
export type ChangeView = (change: WorkspaceChange) => Promise<WorkspaceChange | undefined>

export function changeViewFor(deps: ChangeVisibilityDeps, caller: Viewer): ChangeView {
  const { scopes } = caller
  if (scopes.scopeKeys === undefined && scopes.connections === undefined && scopes.surfaces === undefined) return async (change) => change
  const limitedInData = scopes.connections !== undefined || scopes.surfaces !== undefined
  const document = async () => (await deps.config.current(caller.workspaceId)).document

  return async (change) => {
    switch (change.kind) {
      case 'correction': {
        const correction = await deps.stores.corrections.byId(caller.workspaceId, change.entityId)
        if (!correction || !inScope(scopes, 'scopeKeys', correction.scopeKey)) return undefined
        if (correction.entityType.startsWith(ROW_PREFIX) && limitedInData) {
          if (!connectionAllowed(scopes, await document(), correction.entityType.slice(ROW_PREFIX.length))) return undefined
        }
        return change
      }
      case 'connection':
      case 'credentials':
        return !limitedInData || connectionAllowed(scopes, await document(), change.entityId) ? change : undefined
      case 'config': {
        if (!limitedInData) return change
        const commit = await deps.stores.config.commitById(caller.workspaceId, change.entityId)
        if (!commit) return { ...change, summary: 'configuration committed' }
        const current = await document()
        // A surface the token is not limited away from is still hidden when it holds none of the
        // connections the token may read (or no longer exists to tell).
        const surfaceVisible = (lookup: string): boolean => {
          if (!surfaceAllowed(scopes, lookup)) return false
          if (scopes.connections === undefined) return true
          const surface = current.surfaces.find((s) => s.lookup === lookup)
          return surface?.connections.some((c) => connectionAllowed(scopes, current, c)) ?? false
        }
        const visible = commit.changes.filter((c) =>
          c.entity === 'connection' ? connectionAllowed(scopes, current, c.id) : c.entity === 'surface' ? surfaceVisible(c.id) : true,
        )
        if (visible.length === commit.changes.length) return change
        const shown = visible.length === 0 ? '' : `: ${describeChanges(visible).join(', ')}`
        return {
          ...change,
          summary: `${visible.length} change${visible.length === 1 ? '' : 's'}${shown}; changes outside this token's scopes are not shown`,
        }
      }
      default:
        return change
    }
  }
}
