/**
 * @module
 * Committed workspace changes: the outbox the change stream (spec 6, `/oi-api/eac-changes/stream`)
 * reads. A change row is written in the same transaction as the change itself, so a rolled-back
 * change is never announced and a committed one always is.
 */

export type ChangeKind = 'config' | 'token' | 'correction' | 'proposal' | 'connection' | 'credentials' | 'account'

export interface WorkspaceChange {
  /** Sequence per workspace: 1, 2, 3 … in commit order (the SSE `id:`). */
  readonly seq: number
  readonly workspaceId: string
  readonly kind: ChangeKind
  readonly entityType: string
  readonly entityId: string
  readonly action: string
  readonly actorId: string
  readonly actorName: string
  readonly at: number
  /** The configuration commit this change belongs to, when it is one. */
  readonly commitId: string | undefined
  readonly summary: string
}

export type NewWorkspaceChange = Omit<WorkspaceChange, 'seq'>

export interface ChangeStore {
  /**
   * Appends a change inside the current transaction. MUST allocate `seq` so that sequence order is
   * commit order (a per-workspace counter row locked until commit).
   */
  append(change: NewWorkspaceChange): Promise<WorkspaceChange>
  /** Changes with seq > afterSeq, oldest first. */
  since(workspaceId: string, afterSeq: number, limit: number): Promise<WorkspaceChange[]>
  latestSeq(workspaceId: string): Promise<number>
}
