/**
 * @module
 * The status model of pull connectors (issue 6, item 2) and the port that stores it. One status per
 * (workspace, connection) of kind `postgres` or `mqtt`, written by the process that holds the
 * connector's lease; read by the CLI (`provenant connection status`) and the portal.
 */

/**
 * - `starting`: connecting to the source (a retry after failures keeps showing `backoff`)
 * - `running`:  connected; the last poll or message batch succeeded
 * - `backoff`:  the last attempt failed; the next one is scheduled (exponential backoff)
 * - `failed`:   the connection's settings cannot work (e.g. a missing setting); waits for a new configuration
 * - `stopped`:  not running (removed, switched off in the workspace settings, or the server stopped)
 */
export const CONNECTOR_STATES = ['starting', 'running', 'backoff', 'stopped', 'failed'] as const
export type ConnectorState = (typeof CONNECTOR_STATES)[number]

export type PullKind = 'postgres' | 'mqtt'
export const PULL_KINDS: readonly PullKind[] = ['postgres', 'mqtt']

export interface ConnectorStatus {
  readonly workspaceId: string
  readonly lookup: string
  readonly kind: PullKind
  readonly state: ConnectorState
  /** When the connector last started a poll or connected (ms since the epoch). */
  readonly lastRunAt: number | undefined
  /** When a poll or batch last succeeded. */
  readonly lastSuccessAt: number | undefined
  /** The last failure, scrubbed of secrets and truncated (LAST_ERROR_MAX characters). */
  readonly lastError: string | undefined
  readonly lastErrorAt: number | undefined
  readonly rowsIngested: number
  /** Rows or messages that did not fit the declared columns (counted, sampled in the activity log). */
  readonly rowsRejected: number
  /** The resume point, JSON text; its shape belongs to the connector kind. */
  readonly cursor: string | undefined
  readonly updatedAt: number
}

/** Longest stored error message. */
export const LAST_ERROR_MAX = 500

export type StatusPatch = Partial<Pick<ConnectorStatus, 'state' | 'lastRunAt' | 'lastSuccessAt' | 'lastError' | 'lastErrorAt'>> & {
  /** Clears lastError / lastErrorAt (set on recovery). */
  readonly clearError?: boolean
}

export interface ConnectorStatusStore {
  /** Creates the row when missing (counters zero, no cursor), then applies the patch. */
  update(workspaceId: string, lookup: string, kind: PullKind, patch: StatusPatch, at: number): Promise<void>
  /**
   * Adds to the counters and sets the cursor. Called inside the ingest transaction of the rows the
   * cursor covers: MUST commit or roll back with them (that is the exactly-once guarantee).
   */
  advance(
    workspaceId: string,
    lookup: string,
    kind: PullKind,
    delta: { rowsIngested: number; rowsRejected: number; cursor: string | undefined },
    at: number,
  ): Promise<void>
  get(workspaceId: string, lookup: string): Promise<ConnectorStatus | undefined>
  list(workspaceId: string): Promise<ConnectorStatus[]>
}
