/**
 * @module
 * The ledger core's public surface (style notes §6.1): other features import from here, never from
 * the files behind it. Storage-free; see docs/design/ledger.md for the life of a record.
 */

export { type AppendBatchResult, type AppendEntry, appendBatch, genesisTip } from './append-batch.js'
export {
  CheckpointError,
  checkpointOrigin,
  HEADS_LOG_CONTAINER_ID,
  type HeadsLogEntry,
  headsLogRecordBody,
  openCheckpoint,
  parseHeadsLogEntry,
  signCheckpoint,
  type VerifiedCheckpoint,
} from './checkpoint.js'
export {
  canonicalRecordBody,
  containerIdForScope,
  createRecordHasher,
  digestsEqual,
  formatLedgerTimestamp,
  genesisDigest,
  LEDGER_ALG_VERSION,
  nextLedgerTimestamp,
  PLATFORM_CONTAINER_ID,
  type RecordHasher,
  recordDigest,
} from './digest.js'
export {
  buildExportHeader,
  createExportWriter,
  EXPORT_CONTENT_TYPES,
  type ExportFormat,
  ExportFormatError,
  type ExportHeader,
  type ExportTrailer,
  type ExportWriter,
  isExportValid,
  readExport,
  type VerifyExportResult,
  verifyExport,
} from './export-format.js'
export {
  type AppendInput,
  createLedgerCommands,
  type EdgeLedger,
  type ExportInput,
  type LedgerCommands,
  type LogRef,
  type PendingCallRecord,
  type VerifyAnswer,
  type VerifyInput,
  verifyAnswerOf,
} from './ledger-commands.js'
export {
  headsContainer,
  type LedgerRecordView,
  type LedgerService,
  platformContainer,
  scopeContainer,
  scopeKeyOf,
} from './ledger-service.js'
export type { LedgerSnapshot, LedgerStore } from './ledger-store.js'
export type { ChainTip, ContainerRef, RecordBody, StoredHead, StoredRecord } from './ledger-types.js'
export {
  type CompactRange,
  type CompletedNode,
  consistencyProof,
  createCompactRange,
  deserializeCompactRange,
  inclusionProof,
  type NodeSource,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js'
export { formatRecordId, MAX_RECORD_SEQ, parseRecordId, RECORD_ID_DIGITS, type RecordIdResult } from './record-id.js'
export {
  createNoteSigner,
  exportSigningKeyPem,
  formatPrivateNoteKey,
  generateSigningKey,
  importSigningKey,
  NoteError,
  type NoteSigner,
  type NoteVerifierKey,
  parseVerifierKey,
} from './signed-note.js'
export {
  type ChainVerifier,
  createChainVerifier,
  type VerifyChainInput,
  type VerifyFacts,
  type VerifyReasonCode,
  type VerifyResult,
  type VerifyVerdict,
  verifyChain,
  verifyChainSync,
} from './verify-chain.js'
