/**
 * @module
 * Corrections (amendments): documented edits that keep the original (spec 2.8, 3, 4.6; design §8).
 */
import type { JsonValue } from '../../shared/strict-json.js'

export const CORRECTION_STATUSES = ['pending', 'applied', 'rejected'] as const
export type CorrectionStatus = (typeof CORRECTION_STATUSES)[number]

export interface Person {
  readonly id: string
  readonly name: string
}

export interface Correction {
  readonly id: string
  readonly workspaceId: string
  readonly scopeKey: string
  readonly entityType: string
  readonly entityId: string
  /** 1 for the first correction of the entity, 2 for the next, … (the chain link order). */
  readonly chainIndex: number
  /** The previous correction of the same entity in this scope, when there is one. */
  readonly previousId: string | undefined
  readonly reasonCategory: string
  readonly reason: string
  readonly before: JsonValue
  readonly after: JsonValue
  readonly amendedBy: Person
  readonly status: CorrectionStatus
  /** Whether the workspace settings required approval when it was created. */
  readonly approvalRequired: boolean
  /** Server time of creation (ms). */
  readonly createdAt: number
  /** Optional caller-given time the corrected fact refers to (e.g. a delayed entry), ISO 8601. */
  readonly effectiveAt: string | undefined
  readonly decidedAt: number | undefined
  /** Who approved (status applied after approval) or rejected it. */
  readonly decidedBy: Person | undefined
  readonly rejectionReason: string | undefined
  /** The approver's optional comment (the approve call's `comment`, the portal form's comment). */
  readonly approvalComment?: string | undefined
  /** How the decision was made: `api`, or `portal` with an electronic signature (password re-entered). */
  readonly decidedVia: 'api' | 'portal' | undefined
}

export interface CorrectionFilter {
  readonly workspaceId: string
  readonly scopeKey: string
  readonly entityId?: string
  readonly entityType?: string
  readonly reasonCategory?: string
  /** Account name or id of the author. */
  readonly amendedBy?: string
  readonly status?: CorrectionStatus
  /** createdAt >= from, ms. */
  readonly from?: number
  /** createdAt < to, ms. */
  readonly to?: number
  readonly limit: number
  readonly offset: number
}

/** What the store filters on: as CorrectionFilter, but the scope may be left open. */
export type CorrectionStoreFilter = Omit<CorrectionFilter, 'scopeKey'> & {
  readonly scopeKey?: string | undefined
  /**
   * When set, corrections of data rows (`row:<lookup>`) only of these connections; other entity
   * types are not narrowed (a token limited to some connections, issue 14 item 6).
   */
  readonly rowConnections?: readonly string[] | undefined
}

export interface CorrectionStore {
  insert(correction: Correction): Promise<void>
  byId(workspaceId: string, id: string): Promise<Correction | undefined>
  /** The latest correction of one entity in one scope (highest chain index). */
  latestOf(workspaceId: string, scopeKey: string, entityType: string, entityId: string): Promise<Correction | undefined>
  /** The scope of the oldest correction of one entity in any scope (a data row's binding scope), if any. */
  firstScopeOf(workspaceId: string, entityType: string, entityId: string): Promise<string | undefined>
  /** Every correction of one entity in one scope, by chain index ascending. */
  chainOf(workspaceId: string, scopeKey: string, entityType: string, entityId: string): Promise<Correction[]>
  /** Sets the decision of a pending correction; false when it was no longer pending. */
  decide(
    workspaceId: string,
    id: string,
    decision: { status: 'applied' | 'rejected'; at: number; by: Person; reason: string | undefined; via: 'api' | 'portal' },
  ): Promise<boolean>
  /** Newest first, with the total matching count. Without a scopeKey: every scope (the portal's review list). */
  query(filter: CorrectionStoreFilter): Promise<{ items: Correction[]; total: number }>
  /** Serialises corrections of one entity (locks a per-entity counter row until commit) and returns the next chain index. */
  nextChainIndex(workspaceId: string, scopeKey: string, entityType: string, entityId: string): Promise<number>
}
