/**
 * @module
 * Corrections: a change to a record that keeps the original, pending or applied by the workspace's
 * approval rules (spec 2.8, 3, 4.6). Other features and the edges import from here, never from the
 * files behind it.
 */
export {
  CORRECTION_STATUSES,
  type Correction,
  type CorrectionFilter,
  type CorrectionStatus,
  type CorrectionStore,
  type CorrectionStoreFilter,
  type Person,
} from './correction.js'
export {
  approvalRequiredFor,
  type CorrectionsService,
  type CorrectionsServiceDeps,
  type CreateCorrectionInput,
  createCorrectionsService,
  type DecisionChannel,
  type DecisionSignature,
} from './corrections-service.js'
