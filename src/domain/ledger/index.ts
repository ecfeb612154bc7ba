/**
 * @module
 * The ledger core's public surface (style notes §6.1): other features import from here, never from
 * the files behind it. Storage-free; see docs/design/ledger.md for the life of a record.
 */
export type { ChainTip, ContainerRef, RecordBody, StoredHead, StoredRecord } from './ledger-types.js'
export type { LedgerSnapshot, LedgerStore } from './ledger-store.js'
export { formatRecordId, MAX_RECORD_SEQ, parseRecordId, RECORD_ID_DIGITS, type RecordIdResult } from './record-id.js'
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
  recordDigest,
  type RecordHasher,
} from './digest.js'
export { appendBatch, genesisTip, type AppendBatchResult, type AppendEntry } from './append-batch.js'
export {
  consistencyProof,
  createCompactRange,
  deserializeCompactRange,
  inclusionProof,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type CompactRange,
  type CompletedNode,
  type NodeSource,
} from './merkle.js'
export {
  createNoteSigner,
  exportSigningKeyPem,
  formatPrivateNoteKey,
  generateSigningKey,
  importSigningKey,
  NoteError,
  parseVerifierKey,
  type NoteSigner,
  type NoteVerifierKey,
} from './signed-note.js'
export {
  CheckpointError,
  checkpointOrigin,
  HEADS_LOG_CONTAINER_ID,
  headsLogRecordBody,
  openCheckpoint,
  parseHeadsLogEntry,
  signCheckpoint,
  type HeadsLogEntry,
  type VerifiedCheckpoint,
} from './checkpoint.js'
export {
  createChainVerifier,
  verifyChain,
  verifyChainSync,
  type ChainVerifier,
  type VerifyChainInput,
  type VerifyFacts,
  type VerifyReasonCode,
  type VerifyResult,
  type VerifyVerdict,
} from './verify-chain.js'
export {
  buildExportHeader,
  createExportWriter,
  EXPORT_CONTENT_TYPES,
  ExportFormatError,
  readExport,
  verifyExport,
  type ExportFormat,
  type ExportHeader,
  type ExportTrailer,
  type ExportWriter,
} from './export-format.js'
