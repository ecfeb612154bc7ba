/**
 * @module
 * Composition root: configuration → stores → services → app. The only module that imports across
 * every layer. `createRuntime` is what `provenant serve` and the tests start.
 */
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { type ColumnarService, openColumnarService } from './adapters/columnar/columnar-service.js'
import { mqttConnector } from './adapters/connectors/mqtt-connector.js'
import { postgresConnector } from './adapters/connectors/postgres-connector.js'
import { openEventBus } from './adapters/events/open-event-bus.js'
import { openExportStorage } from './adapters/export-files/open-export-storage.js'
import { loadLedgerSigning } from './adapters/keys/ledger-key.js'
import { type LoadedKeyring, loadMasterKeyring } from './adapters/keys/master-key.js'
import { keysDirOf, loadKeyring, serverId } from './adapters/keys/server-identity.js'
import { openStores, sqliteFileOf } from './adapters/open-stores.js'
import { createPostgresConnectorLeases } from './adapters/postgres/postgres-connector-leases.js'
import { createQueryPool } from './adapters/query-workers/query-pool.js'
import type { Config } from './config/config.js'
import { createAccessService } from './domain/access/access-service.js'
import { createAdminService } from './domain/access/admin-service.js'
import type { ScryptCost } from './domain/access/passwords.js'
import { createStreamGuard } from './domain/access/stream-guard.js'
import { createActivityLog } from './domain/activity/activity-log.js'
import { createConnectorStatusService } from './domain/connectors/connector-status-service.js'
import { createConnectorSupervisor, type RevealCredentials, singleProcessLeases } from './domain/connectors/connector-supervisor.js'
import { createCorrectionsService } from './domain/corrections/corrections-service.js'
import { type CredentialVault, createCredentialVault } from './domain/credentials/credential-vault.js'
import { createCredentialsService } from './domain/credentials/credentials-service.js'
import { createExportService } from './domain/exports/export-service.js'
import { createIngestService } from './domain/ingest/ingest-service.js'
import { createLedgerCommands } from './domain/ledger/ledger-commands.js'
import { createLedgerService } from './domain/ledger/ledger-service.js'
import { createProposalServices } from './domain/proposals/index.js'
import { createQueryService } from './domain/queries/query-service.js'
import { apiServicesOf, portalServicesOf, type Services } from './domain/services.js'
import { createSessionService } from './domain/sessions/session-service.js'
import { createSignatureService } from './domain/signatures/index.js'
import type { Stores } from './domain/stores.js'
import { openChangeFeed } from './domain/streams/change-feed.js'
import { changeViewFor } from './domain/streams/change-visibility.js'
import { createLiveHub } from './domain/streams/live-hub.js'
import { createConfigService } from './domain/workspace-config/config-service.js'
import { buildApp } from './http/app.js'
import { registerDownloadRoute } from './http/routes/exports.js'
import { apiRoutes } from './http/routes/index.js'
import { enableWebSocketUpgrades } from './http/websocket-upgrade.js'
import { createLogger } from './logging.js'
import { registerPortal } from './portal/portal-plugin.js'
import { type Clock, systemClock } from './shared/clock.js'
import { scrub } from './shared/secret-scrubber.js'
import { VERSION } from './version.js'

export interface RuntimeOptions {
  readonly clock?: Clock
  readonly logger?: Logger
  readonly scryptCost?: ScryptCost
  /** Pull connectors: restart backoff and lease retry (tests shorten them). */
  readonly connectors?: {
    readonly backoff?: { initialMs: number; maxMs: number }
    readonly leaseRetryMs?: number
    readonly rescanMs?: number
  }
}

export interface Runtime {
  readonly config: Config
  readonly services: Services
  readonly app: FastifyInstance
  readonly serverId: string
  /** Plaintext connection credentials, for the connector supervisor only (never on Services). */
  readonly credentialVault: CredentialVault
  /** The columnar tier, when on (PROVENANT_COLUMNAR=on). */
  readonly columnar: ColumnarService | undefined
  /**
   * Raw storage, for the composition root's own wiring, tests and benchmarks only: the edges get
   * `services`, which carries no store.
   */
  readonly stores: Stores
  close(): Promise<void>
}

export interface ServicesHandle {
  readonly services: Services
  readonly serverId: string
  /** Plaintext connection credentials, for the connector supervisor only (never on Services). */
  readonly credentialVault: CredentialVault
  /** The master keys of connection credentials (key rotation). */
  readonly masterKeys: LoadedKeyring
  /** The columnar tier, when on (PROVENANT_COLUMNAR=on). */
  readonly columnar: ColumnarService | undefined
  /** Raw storage for the composition root (connector supervisor), tests and benchmarks; never given to an edge. */
  readonly stores: Stores
  /** Stops the query workers and closes the store. */
  close(): Promise<void>
}

/** Opens storage and builds every service (no HTTP). Used by the CLI and by createRuntime. */
export async function createServices(config: Config, options: RuntimeOptions = {}): Promise<ServicesHandle> {
  const clock = options.clock ?? systemClock
  const log = options.logger
  const bus = await openEventBus(config.databaseUrl, (error) => log?.warn({ err: error }, 'event bus connection problem'))
  const stores = await openStores(config, { onChangeCommitted: (change) => bus.publish({ kind: 'change', change }) }).catch(
    async (error: unknown) => {
      await bus.close()
      throw error
    },
  )
  try {
    const masterKeys = loadMasterKeyring({
      dataDir: config.dataDir,
      env: { PROVENANT_MASTER_KEY: config.masterKey, PROVENANT_MASTER_KEY_PREVIOUS: config.masterKeyPrevious },
    })
    const id = await serverId(stores.db)
    const keyring = await loadKeyring(
      stores.db,
      { keysDir: keysDirOf(config.dataDir), privateKeyPem: config.jwtPrivateKeyPem },
      clock.now(),
    )
    const ledger = createLedgerService({
      stores,
      clock,
      signing: loadLedgerSigning({
        keysDir: keysDirOf(config.dataDir),
        keyText: config.ledgerSigningKey,
        serverId: id,
        extraTrustedKeys: config.ledgerTrustedKeys ?? [],
      }),
      onBackgroundError: (error, what) => log?.error({ err: error }, `activity log: ${what} failed`),
      onIntegrityAlarm: (message, container) => log?.error({ container }, message),
    })
    const activity = createActivityLog({ ledger })
    const configService = createConfigService({ stores, clock, activity })
    const dialect = stores.backend
    // the columnar tier (off by default; docs/design/columnar.md): one DuckDB instance per process
    const columnar = config.columnar
      ? await openColumnarService(
          stores.db,
          config.columnar,
          config.databaseUrl ? { postgresUrl: config.databaseUrl } : { sqliteFile: sqliteFileOf(config.dataDir) },
          clock,
        )
      : undefined
    const columnarFlag = columnar ? { columnar: true } : {}
    const executor = createQueryPool(
      config.databaseUrl
        ? { dialect: 'postgres', database: config.databaseUrl, ...columnarFlag }
        : { dialect: 'sqlite', database: sqliteFileOf(config.dataDir), ...columnarFlag },
      config.queryCapacity ?? {},
      columnar,
    )
    const queries = createQueryService({ stores, config: configService, executor, clock, dialect })
    const admin = createAdminService({ stores, clock, ...(options.scryptCost ? { scryptCost: options.scryptCost } : {}) })
    const sessions = createSessionService({ stores, clock, admin, activity })
    const services: Services = {
      clock,
      access: createAccessService({ stores, keyring, audience: `urn:provenant:${id}`, clock, activity }),
      admin,
      config: configService,
      bus,
      activity,
      ledger,
      ledgerCommands: createLedgerCommands(ledger),
      ingest: createIngestService({ stores, config: configService, bus, clock, activity }),
      queries,
      corrections: createCorrectionsService({ stores, config: configService, activity, clock }),
      ...createProposalServices({ stores, clock, config: configService, queries, activity }),
      sessions,
      signatures: createSignatureService({ sessions, activity, clock }),
      connectors: createConnectorStatusService({ stores, config: configService }),
      credentials: createCredentialsService({ stores, clock, activity, keyring: masterKeys }),
      exports: createExportService({
        stores,
        config: configService,
        ...openExportStorage(config, clock),
        activity,
        clock,
        onSweepError: (error) => log?.warn({ err: error }, 'export sweeper: could not delete expired export files'),
      }),
      changeFeed: {
        open: (workspaceId, afterSeq, sink) => openChangeFeed({ stores, bus }, workspaceId, afterSeq, sink),
        viewFor: (caller) => changeViewFor({ stores, config: configService }, caller),
      },
      live: createLiveHub({
        stores,
        config: configService,
        bus,
        onError: (error, what) => log?.warn({ err: error }, `live stream: ${what} failed`),
      }),
      streamGuard: createStreamGuard({
        stores,
        clock,
        onError: (error) => log?.warn({ err: error }, 'stream guard: checking the tokens of open streams failed'),
      }),
    }
    return {
      services,
      stores,
      serverId: id,
      credentialVault: createCredentialVault({ stores, keyring: masterKeys }),
      masterKeys,
      columnar,
      async close() {
        await services.exports.stopSweeper()
        services.streamGuard.close()
        await services.live.close()
        await ledger
          .close()
          .catch((error: unknown) => log?.error({ err: error }, 'activity log: records still queued at shutdown could not be committed'))
        await executor.close()
        await columnar?.close()
        await bus.close()
        await stores.close()
      },
    }
  } catch (error) {
    await stores.close().catch(() => {})
    await bus.close().catch(() => {})
    throw error
  }
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const handle = await createServices(config, options)
  const { services, serverId: id } = handle
  const logger = options.logger ?? createLogger(config.logLevel)
  // The API and MCP get every service but the proposal review (accepting happens only in the portal).
  // Both edges get the activity log as the caller's commands only (issue 19 item 1).
  const apiServices = apiServicesOf(services)
  const portalServices = portalServicesOf(services)
  const app = await buildApp({
    services: apiServices,
    routes: apiRoutes(apiServices, { publicUrl: config.publicUrl, allowedOrigins: config.allowedOrigins }),
    version: VERSION,
    publicUrl: config.publicUrl,
    logger,
    extend: async (instance) => {
      const columnar = handle.columnar
      await registerPortal(instance, {
        services: portalServices,
        publicUrl: config.publicUrl,
        version: VERSION,
        ...(columnar ? { columnarProgress: (workspaceId: string) => columnar.progress(workspaceId) } : {}),
      })
    },
  })
  registerDownloadRoute(app, services.exports)
  enableWebSocketUpgrades(app)
  services.exports.startSweeper()
  // The vault decrypts inside the connector only; every revealed value joins the scrubber.
  const reveal: RevealCredentials = (workspaceId, lookup) => handle.credentialVault.reveal(workspaceId, lookup)
  const supervisor = createConnectorSupervisor({
    stores: handle.stores,
    ingest: services.ingest,
    bus: services.bus,
    activity: services.activity,
    clock: services.clock,
    serverId: id,
    factories: { postgres: postgresConnector, mqtt: mqttConnector },
    leases: config.databaseUrl ? createPostgresConnectorLeases(config.databaseUrl) : singleProcessLeases,
    reveal,
    scrub,
    log: logger,
    ...options.connectors,
  })
  // Connectors start once the server listens, and stop first on close (their in-flight batches finish).
  app.addHook('onListen', async () => {
    await supervisor.start()
    // one compactor per deployment: the lease is the connectors' kind (an advisory lock on PostgreSQL)
    handle.columnar?.start(config.databaseUrl ? createPostgresConnectorLeases(config.databaseUrl) : singleProcessLeases, logger)
  })
  return {
    config,
    services,
    app,
    serverId: id,
    credentialVault: handle.credentialVault,
    columnar: handle.columnar,
    stores: handle.stores,
    async close() {
      await supervisor.stop()
      await app.close()
      await handle.close()
    },
  }
}
