/**
 * @module
 * What admins see of the pull connectors (the CLI's `provenant connection status`, the portal's
 * connections page): every connection of kind postgres or mqtt in the configuration in force, with
 * its stored status. A connection that never ran shows `stopped` with empty counters.
 */
import type { Stores } from '../stores.js'
import type { ConfigService } from '../workspace-config/index.js'
import { type ConnectorStatus, PULL_KINDS, type PullKind } from './connector-status.js'

export interface ConnectionStatusView extends Omit<ConnectorStatus, 'workspaceId' | 'updatedAt'> {
  /** False when the workspace settings switch this kind of connector off. */
  readonly enabled: boolean
  readonly updatedAt: number | undefined
}

/** The declared contract of the connectors' status view; `createConnectorStatusService` is checked against it. */
export interface ConnectorStatusService {
  /**
   * One entry per pull connection (postgres, mqtt) of the configuration in force, in configuration
   * order, with its stored status; a connection that never ran MUST show `stopped` with empty
   * counters, and `enabled` false when the workspace settings switch its kind off.
   */
  status(workspaceId: string): Promise<ConnectionStatusView[]>
}

export interface ConnectorStatusServiceDeps {
  /** Only the connectors' stored status is read. */
  readonly stores: Pick<Stores, 'connectors'>
  readonly config: ConfigService
}

export function createConnectorStatusService(deps: ConnectorStatusServiceDeps): ConnectorStatusService {
  return {
    async status(workspaceId: string): Promise<ConnectionStatusView[]> {
      const current = await deps.config.current(workspaceId)
      const stored = new Map((await deps.stores.connectors.list(workspaceId)).map((s) => [s.lookup, s]))
      return current.document.connections
        .filter((c) => (PULL_KINDS as readonly string[]).includes(c.kind))
        .map((c) => {
          const kind = c.kind as PullKind
          const s = stored.get(c.lookup)
          return {
            lookup: c.lookup,
            kind,
            enabled: current.document.settings.capabilities.connectors[kind],
            state: s?.state ?? 'stopped',
            lastRunAt: s?.lastRunAt,
            lastSuccessAt: s?.lastSuccessAt,
            lastError: s?.lastError,
            lastErrorAt: s?.lastErrorAt,
            rowsIngested: s?.rowsIngested ?? 0,
            rowsRejected: s?.rowsRejected ?? 0,
            cursor: s?.cursor,
            updatedAt: s?.updatedAt,
          }
        })
    },
  }
}
