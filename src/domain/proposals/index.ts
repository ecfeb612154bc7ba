/**
 * @module
 * Proposals: the public surface for services, MCP and the portal.
 */
export {
  applyChangeSet,
  conflicts,
  MAX_CHANGES,
  MAX_PROPOSED_QUERY_LENGTH,
  PROPOSAL_ENTITIES,
  type ProposalEntity,
  type ProposedChange,
  proposedChangeSchema,
} from './change-set.js'
export { diffChangeSet, type ProposalDiff, type ProposalDiffEntry, summariseDiff } from './proposal-diff.js'
export {
  createProposalServices,
  MAX_RATIONALE_LENGTH,
  MAX_REASON_LENGTH,
  type NewProposal,
  newProposalSchema,
  type ProposalReview,
  type ProposalService,
  type ProposalServiceDeps,
  type Reviewer,
  type ReviewOutcome,
} from './proposal-service.js'
export {
  type Person,
  PROPOSAL_STATUSES,
  type Proposal,
  type ProposalChannel,
  type ProposalStatus,
  type ProposalStore,
} from './proposal-store.js'
