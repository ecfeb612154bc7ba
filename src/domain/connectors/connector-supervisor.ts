/**
 * @module
 * The connector supervisor (issue 6, item 2; design §9, §11): one per server process. It watches
 * the workspace configurations (changes announced on the event bus, plus a periodic re-read) and
 * runs one connector per connection of kind `postgres` or `mqtt`, restarting a failed one with
 * exponential backoff. On PostgreSQL several API processes share the connectors: a lease (an
 * advisory lock) makes sure exactly one process runs a given connection, and another takes over
 * when the holder dies. Failures and recoveries are decisions in the activity log: state
 * transitions only, never each retry, with messages passed through the secret scrubber.
 */
import { createHash } from 'node:crypto'
import type { Clock } from '../../shared/clock.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import type { IngestService } from '../ingest/index.js'
import type { Stores } from '../stores.js'
import type { EventBus } from '../streams/index.js'
import type { ConnectionConfig, WorkspaceConfig } from '../workspace-config/index.js'
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from './backoff.js'
import { LAST_ERROR_MAX, PULL_KINDS, type PullKind, type StatusPatch } from './connector-status.js'

/** Decrypts a connection's credentials (the credential vault); undefined when none are set. */
export type RevealCredentials = (workspaceId: string, lookup: string) => Promise<Readonly<Record<string, string>> | undefined>

/** Who holds a connector. MUST be exclusive across every process sharing the database. */
export interface ConnectorLease {
  /** Resolves when the lease is lost (e.g. its database session died): the connector must stop. */
  readonly lost: Promise<void>
  release(): Promise<void>
}

export interface ConnectorLeases {
  /** The lease of one connection, or undefined when another process holds it. */
  tryAcquire(workspaceId: string, lookup: string): Promise<ConnectorLease | undefined>
}

/** SQLite is single-process: every lease is granted. */
export const singleProcessLeases: ConnectorLeases = {
  async tryAcquire() {
    return { lost: new Promise<void>(() => {}), release: async () => {} }
  },
}

/** What a connector receives from the supervisor. */
export interface ConnectorContext {
  readonly workspaceId: string
  readonly connection: ConnectionConfig
  /** Decrypted credentials, or undefined. Never log them. */
  readonly credentials: Readonly<Record<string, string>> | undefined
  /** The server's id (shared by every process on one database): stable client ids derive from it. */
  readonly serverId: string
  /** The resume point the last committed batch left (JSON text of the connector's own shape). */
  readonly cursor: string | undefined
  /**
   * Stores what fits of `inputs` through the ingest path (validation, row ids, event bus) and saves
   * `cursor` in the same transaction. Resolves after the commit. `unparsed` counts input that never
   * became a row (e.g. a non-JSON MQTT payload); `samples` describe it for the activity log.
   */
  ingest(
    inputs: readonly unknown[],
    cursor: string | undefined,
    unparsed?: { count: number; samples: readonly string[] },
  ): Promise<{ ingested: number; rejected: number }>
  /** The connector is connected and its last poll or batch succeeded. */
  healthy(): Promise<void>
}

export interface RunningConnector {
  /** Resolves once the connector has stopped after stop(); rejects when it fails. */
  readonly done: Promise<void>
  /** Graceful: finishes the batch in flight (commit and acknowledgements), then disconnects. */
  stop(): Promise<void>
}

/** Builds a connector; throws ConnectorSettingsError for settings that can never work. */
export type ConnectorFactory = (context: ConnectorContext) => RunningConnector

/** The connection's settings or credentials cannot work: no retry until the configuration changes. */
export class ConnectorSettingsError extends Error {}

export interface SupervisorDeps {
  /** Connector status and cursors (`connectors`), the configuration head (`config`), the workspaces (`access`). */
  readonly stores: Pick<Stores, 'access' | 'config' | 'connectors'>
  readonly ingest: IngestService
  readonly bus: EventBus
  readonly activity: ActivityLog
  readonly clock: Clock
  readonly serverId: string
  readonly factories: Readonly<Record<PullKind, ConnectorFactory>>
  readonly leases: ConnectorLeases
  readonly reveal: RevealCredentials
  /** Removes known secret values from text (the logging scrubber). */
  readonly scrub: (text: string) => string
  readonly log?: { warn(details: object, message: string): void }
  readonly backoff?: BackoffPolicy
  /** How often a process that does not hold a lease tries again, and how often configs are re-read. */
  readonly leaseRetryMs?: number
  readonly rescanMs?: number
}

export interface ConnectorSupervisor {
  start(): Promise<void>
  /** Stops every connector gracefully (in-flight batches finish) and releases the leases. */
  stop(): Promise<void>
}

/** Rejected-row decisions are sampled: at most one per connector in this interval. */
const REJECTION_RECORD_INTERVAL_MS = 60_000

/** How long stopping a connector (its in-flight batch included) may take. */
const STOP_TIMEOUT_MS = 15_000

/** True when `promise` settles within `ms`. */
async function within(ms: number, promise: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

function connectorActor(lookup: string): Actor {
  return { id: 'system', name: `connector ${lookup}`, via: 'system' }
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length) return error.errors.map(messageOf).join('; ')
  if (error instanceof Error) return error.message || error.name
  return String(error)
}

export function createConnectorSupervisor(deps: SupervisorDeps): ConnectorSupervisor {
  const { stores, clock, activity } = deps
  const leaseRetryMs = deps.leaseRetryMs ?? 5000
  const rescanMs = deps.rescanMs ?? 30_000
  const runners = new Map<string, Runner>()
  const reconciling = new Map<string, Promise<void>>()
  let stopped = false
  let unsubscribe: (() => void) | undefined
  let rescanTimer: NodeJS.Timeout | undefined

  const cleanMessage = (error: unknown) => {
    const text = deps.scrub(messageOf(error)).replace(/\s+/g, ' ').trim()
    return text.length > LAST_ERROR_MAX ? `${text.slice(0, LAST_ERROR_MAX - 1)}…` : text
  }

  class Runner {
    readonly key: string
    #stopping = false
    #wake: (() => void) | undefined
    #current: RunningConnector | undefined
    #held = false
    #failing = false
    #failures = 0
    #lastRejectionRecord = 0
    readonly loop: Promise<void>

    constructor(
      readonly workspaceId: string,
      readonly connection: ConnectionConfig,
      readonly fingerprint: string,
    ) {
      this.key = `${workspaceId}\n${connection.lookup}`
      this.loop = this.#run().catch((error: unknown) =>
        deps.log?.warn({ err: error, connection: connection.lookup }, 'connector supervisor: unexpected error'),
      )
    }

    get kind(): PullKind {
      return this.connection.kind as PullKind
    }

    async stop(): Promise<void> {
      this.#stopping = true
      this.#wake?.()
      // A connector that cannot finish its batch in time must not hold the server's shutdown.
      const stopped = await within(
        STOP_TIMEOUT_MS,
        (async () => {
          await this.#current?.stop().catch(() => {})
          await this.loop
        })(),
      )
      if (!stopped)
        deps.log?.warn({ connection: this.connection.lookup }, `connector did not stop within ${STOP_TIMEOUT_MS} ms; leaving it behind`)
    }

    #sleep(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          resolve()
        }
        this.#wake = done
      })
    }

    async #status(patch: StatusPatch): Promise<void> {
      await stores.connectors.update(this.workspaceId, this.connection.lookup, this.kind, patch, clock.now())
    }

    async #record(actionType: string, details: Record<string, unknown>): Promise<void> {
      await activity.recordDecision({
        workspaceId: this.workspaceId,
        entityType: 'data-connection',
        entityId: this.connection.lookup,
        actionType,
        actor: connectorActor(this.connection.lookup),
        details: { kind: this.kind, ...details },
      })
    }

    async #run(): Promise<void> {
      while (!this.#stopping) {
        const lease = await deps.leases.tryAcquire(this.workspaceId, this.connection.lookup).catch((error: unknown) => {
          deps.log?.warn(
            { err: new Error(cleanMessage(error)), connection: this.connection.lookup },
            'connector lease: could not ask the database',
          )
          return undefined
        })
        if (!lease) {
          await this.#sleep(leaseRetryMs)
          continue
        }
        this.#held = true
        try {
          await this.#runHolding(lease)
        } catch (error) {
          // The status store itself failed (database unreachable): let go and try again later.
          deps.log?.warn(
            { err: new Error(cleanMessage(error)), connection: this.connection.lookup },
            "connector supervisor: could not record the connector's status",
          )
          await lease.release().catch(() => {})
          await this.#sleep(leaseRetryMs)
          continue
        }
        await lease.release().catch(() => {})
      }
      if (this.#held) await this.#status({ state: 'stopped' }).catch(() => {})
    }

    async #runHolding(lease: ConnectorLease): Promise<void> {
      let leaseLost = false
      void lease.lost.then(() => {
        leaseLost = true
        this.#wake?.()
        void this.#current?.stop().catch(() => {})
      })
      // A connector that was failing before this runner (a new configuration, new credentials, a
      // restart, another process) is still failing: its recovery is the next transition recorded.
      const before = await stores.connectors.get(this.workspaceId, this.connection.lookup)
      // (The stored error is cleared only on recovery, so it survives a `stopped` in between.)
      if (before?.lastError !== undefined) this.#failing = true
      while (!this.#stopping && !leaseLost) {
        let failure: unknown
        try {
          // A retry keeps showing `backoff` (or `failed`) with its error until it works or fails anew.
          await this.#status(this.#failing ? { lastRunAt: clock.now() } : { state: 'starting', lastRunAt: clock.now() })
          const credentials = await deps.reveal(this.workspaceId, this.connection.lookup)
          const stored = await stores.connectors.get(this.workspaceId, this.connection.lookup)
          this.#current = deps.factories[this.kind](this.#context(credentials, stored?.cursor))
          await this.#current.done
        } catch (error) {
          failure = error
        } finally {
          this.#current = undefined
        }
        if (this.#stopping || leaseLost) return
        if (failure === undefined) continue
        const message = cleanMessage(failure)
        const at = clock.now()
        if (failure instanceof ConnectorSettingsError) {
          if (!this.#failing) await this.#record('connector-failed', { error: message, retrying: false })
          this.#failing = true
          await this.#status({ state: 'failed', lastError: message, lastErrorAt: at })
          // Nothing changes until a new configuration replaces this runner (or the server stops).
          while (!this.#stopping && !leaseLost) await this.#sleep(rescanMs)
          return
        }
        this.#failures++
        if (!this.#failing) {
          this.#failing = true
          await this.#record('connector-failed', { error: message, retrying: true })
        }
        await this.#status({ state: 'backoff', lastError: message, lastErrorAt: at })
        await this.#sleep(backoffDelay(this.#failures, deps.backoff ?? DEFAULT_BACKOFF))
      }
    }

    #context(credentials: Readonly<Record<string, string>> | undefined, cursor: string | undefined): ConnectorContext {
      const { workspaceId, connection } = this
      const lookup = connection.lookup
      return {
        workspaceId,
        connection,
        credentials,
        cursor,
        serverId: deps.serverId,
        ingest: async (inputs, nextCursor, unparsed) => {
          let ingested = 0
          const unparsedCount = unparsed?.count ?? 0
          const { problems } = await deps.ingest.importRows(workspaceId, lookup, inputs, {
            actor: connectorActor(lookup),
            inTransaction: async (tx, batch) => {
              ingested = batch.rowCount
              await tx.connectors.advance(
                workspaceId,
                lookup,
                this.kind,
                { rowsIngested: batch.rowCount, rowsRejected: inputs.length - batch.rowCount + unparsedCount, cursor: nextCursor },
                clock.now(),
              )
            },
          })
          const rejected = problems.length + unparsedCount
          if (rejected > 0 && clock.now() - this.#lastRejectionRecord >= REJECTION_RECORD_INTERVAL_MS) {
            this.#lastRejectionRecord = clock.now()
            const samples = [...(unparsed?.samples ?? []), ...problems.map((p) => p.message)]
              .slice(0, 5)
              .map((s) => cleanMessage(s).slice(0, 200))
            await this.#record('rows-rejected', {
              rejected,
              of: inputs.length + unparsedCount,
              samples,
              sampledEveryMs: REJECTION_RECORD_INTERVAL_MS,
            })
          }
          return { ingested, rejected }
        },
        healthy: async () => {
          const at = clock.now()
          if (this.#failing) {
            await this.#record('connector-recovered', { afterFailures: this.#failures })
            this.#failing = false
          }
          this.#failures = 0
          await this.#status({ state: 'running', lastSuccessAt: at, clearError: true })
        },
      }
    }
  }

  async function wantedConnections(workspaceId: string): Promise<Map<string, { connection: ConnectionConfig; fingerprint: string }>> {
    const head = await stores.config.head(workspaceId)
    const wanted = new Map<string, { connection: ConnectionConfig; fingerprint: string }>()
    if (!head) return wanted
    const document: WorkspaceConfig = head.document
    for (const connection of document.connections) {
      if (!(PULL_KINDS as readonly string[]).includes(connection.kind)) continue
      if (!document.settings.capabilities.connectors[connection.kind as PullKind]) continue
      // Credentials are part of the fingerprint (as a digest), so setting new ones restarts the connector.
      const credentials = await deps.reveal(workspaceId, connection.lookup).catch(() => undefined)
      const fingerprint = createHash('sha256')
        .update(JSON.stringify([connection.kind, connection.settings, connection.columns, credentials ?? null]))
        .digest('hex')
      wanted.set(`${workspaceId}\n${connection.lookup}`, { connection, fingerprint })
    }
    return wanted
  }

  async function reconcileNow(workspaceId: string): Promise<void> {
    if (stopped) return
    const wanted = await wantedConnections(workspaceId)
    const stops: Promise<void>[] = []
    for (const [key, runner] of runners) {
      if (runner.workspaceId !== workspaceId) continue
      const next = wanted.get(key)
      if (next && next.fingerprint === runner.fingerprint) continue
      runners.delete(key)
      stops.push(runner.stop())
    }
    await Promise.all(stops)
    if (stopped) return
    for (const [key, { connection, fingerprint }] of wanted) {
      if (!runners.has(key)) runners.set(key, new Runner(workspaceId, connection, fingerprint))
    }
  }

  /** Reconciles one workspace; calls for the same workspace run one after another. */
  function reconcile(workspaceId: string): Promise<void> {
    const previous = reconciling.get(workspaceId) ?? Promise.resolve()
    const next = previous
      .then(() => reconcileNow(workspaceId))
      .catch((error: unknown) => {
        deps.log?.warn(
          { err: new Error(cleanMessage(error)), workspaceId },
          'connector supervisor: could not read the workspace configuration',
        )
      })
    reconciling.set(workspaceId, next)
    return next
  }

  async function reconcileAll(): Promise<void> {
    const workspaces = await stores.access.listWorkspaces()
    await Promise.all(workspaces.map((w) => reconcile(w.id)))
  }

  return {
    async start() {
      unsubscribe = deps.bus.subscribe((event) => {
        if (event.kind === 'change') void reconcile(event.change.workspaceId)
      })
      await reconcileAll()
      const tick = () => {
        rescanTimer = setTimeout(
          () =>
            void reconcileAll()
              .catch(() => {})
              .finally(() => {
                if (!stopped) tick()
              }),
          rescanMs,
        )
        rescanTimer.unref()
      }
      tick()
    },
    async stop() {
      stopped = true
      unsubscribe?.()
      if (rescanTimer) clearTimeout(rescanTimer)
      await Promise.all([...reconciling.values()])
      const all = [...runners.values()]
      runners.clear()
      await Promise.all(all.map((r) => r.stop()))
    },
  }
}
