/**
 * @module
 * What a token's scopes allow in a workspace: the connections it may read (directly, or through
 * the surfaces it is limited to) and the surfaces it may use. Exports, queries and the live stream
 * all ask here, so the rules are the same everywhere.
 */
import type { WorkspaceConfig } from '../workspace-config/index.js'
import type { TokenScopes } from './caller.js'

/** The connection lookups the scopes allow; undefined means every connection. */
export function allowedConnections(scopes: TokenScopes, config: WorkspaceConfig): ReadonlySet<string> | undefined {
  let allowed: Set<string> | undefined
  if (scopes.connections !== undefined) allowed = new Set(scopes.connections)
  if (scopes.surfaces !== undefined) {
    const viaSurfaces = new Set(config.surfaces.filter((s) => scopes.surfaces!.includes(s.lookup)).flatMap((s) => s.connections))
    allowed = allowed === undefined ? viaSurfaces : new Set([...allowed].filter((c) => viaSurfaces.has(c)))
  }
  return allowed
}

export function connectionAllowed(scopes: TokenScopes, config: WorkspaceConfig, lookup: string): boolean {
  const allowed = allowedConnections(scopes, config)
  return allowed === undefined || allowed.has(lookup)
}

export function surfaceAllowed(scopes: TokenScopes, lookup: string): boolean {
  return scopes.surfaces === undefined || scopes.surfaces.includes(lookup)
}
