/**
 * @module
 * The activity log as a service (spec 2.6, 2.7, 4.5, 4.7; design §8): appends through group commit
 * with a signed checkpoint per batch and a heads-log entry per checkpoint, appends inside a caller's
 * transaction (decisions that commit with their change), queries, whole-chain verify on one read
 * snapshot, streamed exports with the latest checkpoint, and RFC 9162 inclusion and consistency
 * proofs, by container. The activity log of decisions and calls and the CLI use it directly; the
 * API and the portal go through the caller's commands (ledger-commands.ts), which pick and check
 * the container and parse the RecordID.
 */

import { createLedgerContext, type LedgerService, type LedgerServiceDeps } from './ledger-contract.js'
import { createLedgerReader } from './ledger-reader.js'
import { createLedgerWriter } from './ledger-writer.js'

export {
  type AppendRequest,
  ChainNotCoveredError,
  type CheckpointInfo,
  type ConsistencyProofResult,
  type ExportRequest,
  headsContainer,
  INTEGRITY_ALARM_ENTITY_TYPE,
  type InclusionProofResult,
  type LedgerExportStream,
  type LedgerPublicKey,
  LedgerRangeError,
  type LedgerRecordView,
  type LedgerService,
  type LedgerServiceDeps,
  type LedgerSigning,
  type LedgerStats,
  type LedgerVerifyRequest,
  platformContainer,
  SYSTEM_USER_ID,
  scopeContainer,
  scopeKeyOf,
  viewOf,
} from './ledger-contract.js'

/** The activity log: the append path and the read path over one context (hashers, origins). */
export function createLedgerService(deps: LedgerServiceDeps): LedgerService {
  const { stores, signing } = deps
  const context = createLedgerContext(signing)
  return {
    origin: context.origin,
    ...createLedgerWriter(deps, context),
    ...createLedgerReader(deps, context),
    publicKey: () => ({
      keyName: signing.signer.name,
      verifierKey: signing.signer.vkey,
      publicKey: Buffer.from(signing.signer.publicKey).toString('base64'),
      logName: signing.logName,
    }),
    trustedKeys: () => signing.trustedKeys,
    containers: (workspaceId) => stores.ledger.containers(workspaceId),
  }
}
