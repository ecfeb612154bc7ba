/**
 * @module
 * What one live stream may and wants to see (spec 4.3, 6; design §9): the `connection` and
 * `surface` filters checked against the workspace configuration and the token's scopes, and the set
 * of connections whose rows the stream receives. The set is recomputed when the configuration
 * changes, so a stream without filters picks up a connection added later.
 */

import { allowedConnections, surfaceAllowed, type TokenScopes } from '../access/index.js'
import { ForbiddenError, InvalidInputError } from '../errors.js'
import type { WorkspaceConfig } from '../workspace-config/index.js'

/** The filters a client asked for (undefined = no filter in that dimension). */
export interface LiveSelection {
  readonly connections?: readonly string[]
  readonly surfaces?: readonly string[]
}

/** Splits a comma list (`a,b, c`); empty items are ignored; an empty list is no filter. */
export function parseNameList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  return names.length > 0 ? [...new Set(names)] : undefined
}

/**
 * Checks the filters: an unknown name is a 400 naming it; a name outside the token's scopes is a
 * 403 naming it (the token may not read it, whatever it asks for).
 */
export function checkLiveSelection(config: WorkspaceConfig, scopes: TokenScopes, selection: LiveSelection): LiveSelection {
  const known = new Set(config.connections.map((c) => c.lookup))
  const allowed = allowedConnections(scopes, config)
  for (const name of selection.connections ?? []) {
    if (!known.has(name))
      throw new InvalidInputError(
        `unknown connection "${name}" in the connection filter; this workspace has ${[...known].map((n) => `"${n}"`).join(', ') || 'no connections'}`,
      )
    if (allowed !== undefined && !allowed.has(name))
      throw new ForbiddenError(`this token is restricted to other connections than "${name}"`)
  }
  const surfaces = new Set(config.surfaces.map((s) => s.lookup))
  for (const name of selection.surfaces ?? []) {
    if (!surfaces.has(name))
      throw new InvalidInputError(
        `unknown surface "${name}" in the surface filter; this workspace has ${[...surfaces].map((n) => `"${n}"`).join(', ') || 'no surfaces'}`,
      )
    if (!surfaceAllowed(scopes, name)) throw new ForbiddenError(`this token is restricted to other surfaces than "${name}"`)
  }
  return selection
}

/** The connections whose rows the stream receives under this configuration. */
export function liveConnections(config: WorkspaceConfig, scopes: TokenScopes, selection: LiveSelection): Set<string> {
  const allowed = allowedConnections(scopes, config)
  let out = config.connections.map((c) => c.lookup).filter((c) => allowed === undefined || allowed.has(c))
  if (selection.connections) out = out.filter((c) => selection.connections!.includes(c))
  if (selection.surfaces) {
    const viaSurfaces = new Set(config.surfaces.filter((s) => selection.surfaces!.includes(s.lookup)).flatMap((s) => s.connections))
    out = out.filter((c) => viaSurfaces.has(c))
  }
  return new Set(out)
}

/** The surfaces an event of this connection names: those holding it that the token may see. */
export function liveSurfacesOf(config: WorkspaceConfig, scopes: TokenScopes, connection: string): string[] {
  return config.surfaces.filter((s) => s.connections.includes(connection) && surfaceAllowed(scopes, s.lookup)).map((s) => s.lookup)
}
