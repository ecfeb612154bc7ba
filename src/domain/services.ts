/**
 * @module
 * The domain services the HTTP layer, the portal, MCP and the CLI are given (created in main.ts).
 */
import type { Clock } from '../shared/clock.js'
import type { AccessService } from './access/access-service.js'
import type { AdminService } from './access/admin-service.js'
import type { StreamGuard } from './access/stream-guard.js'
import type { ActivityLog } from './activity/activity-log.js'
import type { ConnectorStatusService } from './connectors/connector-status-service.js'
import type { CorrectionsService } from './corrections/corrections-service.js'
import type { CredentialsService } from './credentials/credentials-service.js'
import type { ExportService } from './exports/export-service.js'
import type { IngestService } from './ingest/ingest-service.js'
import type { EdgeLedger, LedgerCommands, LedgerService } from './ledger/index.js'
import type { ProposalReview, ProposalService } from './proposals/index.js'
import type { QueryService } from './queries/query-service.js'
import type { SessionService } from './sessions/session-service.js'
import type { SignatureService } from './signatures/index.js'
import type { ChangeFeedService } from './streams/change-feed.js'
import type { EventBus } from './streams/event-bus.js'
import type { LiveHub } from './streams/live-hub.js'
import type { ConfigService } from './workspace-config/config-service.js'

/** Every domain service, as the composition root builds them; no edge receives raw storage. */
export interface Services {
  readonly clock: Clock
  readonly access: AccessService
  readonly admin: AdminService
  readonly config: ConfigService
  readonly bus: EventBus
  readonly activity: ActivityLog
  /** The activity log's records by container: append, query, verify, export, proofs (spec 4.5, 4.7). */
  readonly ledger: LedgerService
  /** The same for a caller, from the spec's raw inputs: authorises and parses itself (issue 19 item 1). */
  readonly ledgerCommands: LedgerCommands
  readonly ingest: IngestService
  readonly queries: QueryService
  readonly corrections: CorrectionsService
  /** Filing and reading proposals (MCP, portal). */
  readonly proposals: ProposalService
  /** Accepting and rejecting proposals: given to the portal only, never to the API or MCP. */
  readonly proposalReview: ProposalReview
  readonly sessions: SessionService
  /** Part 11 electronic signatures (password re-entry): the portal's; the API and MCP never sign. */
  readonly signatures: SignatureService
  readonly exports: ExportService
  /** The change stream's feed of committed changes, replay included (spec 4.10). */
  readonly changeFeed: ChangeFeedService
  /** The live event stream's fan-out of ingested rows (design §9). */
  readonly live: LiveHub
  /** Closes open streams (live, changes) whose token was revoked, expired or whose account was disabled, by anyone. */
  readonly streamGuard: StreamGuard
  /** Pull connectors' status per connection (CLI, portal): `connectors.status(workspaceId)`. */
  readonly connectors: ConnectorStatusService
  /** Setting, clearing and describing connection credentials; never their values (the vault is not here). */
  readonly credentials: CredentialsService
}

/**
 * What the HTTP API and MCP are given. Accepting and rejecting proposals is absent by type (spec:
 * accepting happens only in the portal), and left out of the object too; so are signatures. The activity
 * log is the caller's commands only (`ledger.verify(caller, …)`): no edge picks a container itself.
 */
export type ApiServices = Omit<Services, 'proposalReview' | 'signatures' | 'ledger' | 'ledgerCommands'> & { readonly ledger: EdgeLedger }

/** What the portal is given: everything, the proposal review included; no raw storage; the activity log as the API's. */
export type PortalServices = Omit<Services, 'ledger' | 'ledgerCommands'> & { readonly ledger: EdgeLedger }

/** The edges' view of the activity log, from the composition root's. */
function edgeLedger(services: Pick<Services, 'ledger' | 'ledgerCommands'>): EdgeLedger {
  const { verifyContainer: _operatorOnly, ...commands } = services.ledgerCommands
  const { ledger } = services
  return { ...commands, publicKey: ledger.publicKey, trustedKeys: ledger.trustedKeys, containers: ledger.containers }
}

/** The portal's set, from every service (main.ts; tests that build the edge themselves). */
export function portalServicesOf(services: Services): PortalServices {
  const { ledger: _byContainer, ledgerCommands: _commands, ...rest } = services
  return { ...rest, ledger: edgeLedger(services) }
}

/** The API's and MCP's set: the portal's without the proposal review, left out of the object too. */
export function apiServicesOf(services: Services): ApiServices {
  const { proposalReview: _portalOnly, signatures: _portalSigns, ...api } = portalServicesOf(services)
  return api
}

/** What the CLI's commands are given (operators on the server's own machine). */
export type CliServices = Services
