/**
 * @module
 * Proposals and what their persistence must guarantee. Implemented over portable SQL in
 * src/adapters/sql/sql-proposal-store.ts.
 */
import type { ProposedChange } from './change-set.js'
import type { ProposalDiff } from './proposal-diff.js'

export const PROPOSAL_STATUSES = ['open', 'accepted', 'rejected', 'superseded'] as const
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number]

/** Where a proposal was filed. */
export type ProposalChannel = 'mcp' | 'portal'

export interface Person {
  readonly id: string
  readonly name: string
}

export interface Proposal {
  /** `prop_…` */
  readonly id: string
  readonly workspaceId: string
  readonly status: ProposalStatus
  readonly author: Person
  readonly via: ProposalChannel
  /** Why the author wants the change (shown to the reviewer). */
  readonly rationale: string
  readonly changes: readonly ProposedChange[]
  /** Against the configuration it was made on (`baseCommitId`). */
  readonly diff: ProposalDiff
  /** The configuration commit the proposal was made against (undefined: before the first commit). */
  readonly baseCommitId: string | undefined
  readonly baseSeq: number
  readonly createdAt: number
  /** Set once accepted, rejected or superseded. */
  readonly decidedAt: number | undefined
  readonly decidedBy: Person | undefined
  /** The rejection reason, or why it was superseded. */
  readonly decisionReason: string | undefined
  /** The configuration commit an accepted proposal made. */
  readonly commitId: string | undefined
}

export interface ProposalDecision {
  readonly status: Exclude<ProposalStatus, 'open'>
  readonly decidedAt: number
  readonly decidedBy: Person
  readonly reason?: string
}

export interface ProposalFilter {
  readonly status?: ProposalStatus
  readonly authorId?: string
  readonly limit: number
}

export interface ProposalStore {
  insert(proposal: Proposal): Promise<void>
  byId(workspaceId: string, id: string): Promise<Proposal | undefined>
  /** Newest first. */
  list(workspaceId: string, filter: ProposalFilter): Promise<Proposal[]>
  /**
   * Moves an open proposal to a decided status. MUST change nothing and return false when it is no
   * longer open (another reviewer or process decided first); on PostgreSQL the row stays locked
   * until the transaction ends, so two acceptances of one proposal never both commit.
   */
  decide(workspaceId: string, id: string, decision: ProposalDecision): Promise<boolean>
  /** Records the configuration commit an accepted proposal made (same transaction as decide). */
  setCommit(workspaceId: string, id: string, commitId: string): Promise<void>
}
