/**
 * @module
 * Proposals (issue 8, design §4): an uncommitted change set to the workspace configuration with
 * its author, rationale, status and diff. Filing one (MCP, later the portal) needs
 * `proposals:create`; accepting or rejecting one is the portal's alone — the review half is a
 * separate object (`ProposalReview`) that only the portal is given, and an architecture test keeps
 * it out of the HTTP API and MCP.
 *
 * Life of a proposal: `open` → `accepted` (its changes committed by the acceptor, who approves the
 * warm queries it adds or changes) | `rejected` (with a reason) | `superseded` (the configuration
 * moved underneath it so that it no longer applies cleanly). Every step writes a change row for the
 * change stream and a decision record to the activity log, in the step's transaction.
 */
import { z } from 'zod'
import type { Clock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import { type Caller, roleHas } from '../access/index.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import { DomainError, ForbiddenError, InvalidInputError, NotFoundError, UnavailableError } from '../errors.js'
import type { QueryService } from '../queries/index.js'
import type { Stores } from '../stores.js'
import { type ConfigActor, type ConfigCommit, type ConfigService, validateConfig, type WorkspaceConfig } from '../workspace-config/index.js'
import { applyChangeSet, conflicts, MAX_CHANGES, type ProposedChange, proposedChangeSchema } from './change-set.js'
import { diffChangeSet, summariseDiff } from './proposal-diff.js'
import type { Person, Proposal, ProposalChannel, ProposalStatus } from './proposal-store.js'

export const MAX_RATIONALE_LENGTH = 4000
export const MAX_REASON_LENGTH = 2000

export const newProposalSchema = z.strictObject({
  rationale: z
    .string()
    .trim()
    .min(1, 'say why the change is wanted: the reviewer reads this first')
    .max(MAX_RATIONALE_LENGTH, `the rationale is at most ${MAX_RATIONALE_LENGTH} characters`),
  changes: z
    .array(proposedChangeSchema)
    .min(1, 'a proposal needs at least one change')
    .max(MAX_CHANGES, `a proposal may carry at most ${MAX_CHANGES} changes`),
})

export type NewProposal = z.input<typeof newProposalSchema>

/** Who reviews: a person signed in to the portal, with the role that holds `proposals:review`. */
export type Reviewer = ConfigActor

export interface ReviewOutcome {
  /** `accepted`, or `superseded` when it no longer applied cleanly (nothing was committed). */
  readonly proposal: Proposal
  /** The configuration commit an accepted proposal made. */
  readonly commit: ConfigCommit | undefined
}

export interface ProposalServiceDeps {
  /** Proposals (`proposals`) and the configuration head (`config`), each step in one transaction. */
  readonly stores: Pick<Stores, 'config' | 'proposals' | 'transaction'>
  readonly clock: Clock
  readonly config: ConfigService
  readonly queries: Pick<QueryService, 'check'>
  readonly activity: ActivityLog
}

/**
 * Filing and reading proposals (MCP, the portal); `createProposalServices` is checked against it.
 * Reads MUST first mark open proposals the configuration moved away from as `superseded`.
 */
export interface ProposalService {
  /**
   * Files a proposal against the configuration in force. MUST refuse a caller without
   * `proposals:create` (ForbiddenError), and a change set that does not parse, does not apply, leaves
   * an invalid configuration or changes nothing (InvalidInputError); the KQL of every created or
   * updated warm query MUST compile within the caller's scopes. Recorded as a decision with its
   * change row.
   */
  create(caller: Caller, input: unknown, via: ProposalChannel): Promise<Proposal>
  /** The proposal, or NotFoundError. */
  get(workspaceId: string, id: string): Promise<Proposal>
  /** The proposal, or undefined. */
  find(workspaceId: string, id: string): Promise<Proposal | undefined>
  /** The workspace's proposals matching `filter`, at most `limit` (100 by default, 1..500). */
  list(workspaceId: string, filter?: { status?: ProposalStatus; authorId?: string; limit?: number }): Promise<Proposal[]>
}

/**
 * Accepting and rejecting proposals: the portal's alone (spec 1), so this half MUST NOT reach the
 * HTTP API or MCP (`ApiServices` leaves it out by type).
 */
export interface ProposalReview {
  /**
   * Accepts an open proposal. The reviewer MUST hold `proposals:review` (and `warm-queries:approve`
   * when the change set touches warm queries, as it becomes their approver) and MUST NOT be the
   * author. When the configuration moved, the change set is rebased if every entity it touches is
   * unchanged and the result is valid; otherwise the proposal becomes `superseded` and nothing is
   * committed.
   */
  accept(reviewer: Reviewer, workspaceId: string, id: string): Promise<ReviewOutcome>
  /** Rejects an open proposal; the reviewer MUST hold `proposals:review`; the reason is non-empty, at most MAX_REASON_LENGTH characters. */
  reject(reviewer: Reviewer, workspaceId: string, id: string, reason: string): Promise<Proposal>
}

const SYSTEM: Person = { id: 'system', name: 'system' }

function formatIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 20)
    .map(
      (issue) =>
        `${
          issue.path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
            .join('')
            .replace(/^\./, '') || '(proposal)'
        }: ${issue.message}`,
    )
    .join('; ')
}

export function createProposalServices(deps: ProposalServiceDeps): { proposals: ProposalService; proposalReview: ProposalReview } {
  const { stores, clock, config, queries, activity } = deps

  function actorOf(person: Person, via: Actor['via']): Actor {
    return { id: person.id, name: person.name, via }
  }

  /** The document with the change set applied, validated whole; throws InvalidInputError otherwise. */
  function planDocument(base: WorkspaceConfig, changes: readonly ProposedChange[]): WorkspaceConfig {
    const applied = applyChangeSet(base, changes)
    if (applied.problems.length)
      throw new InvalidInputError(`the change set does not apply to the current configuration: ${applied.problems.join('; ')}`)
    try {
      return validateConfig(applied.document)
    } catch (error) {
      if (error instanceof InvalidInputError) throw new InvalidInputError(`with these changes ${error.message}`, { cause: error })
      throw error
    }
  }

  async function checkKql(caller: Caller, changes: readonly ProposedChange[]): Promise<void> {
    for (const [i, change] of changes.entries()) {
      if (change.action === 'delete' || change.query === undefined) continue
      try {
        await queries.check(caller, change.query)
      } catch (error) {
        if (error instanceof DomainError) {
          // a busy query capacity stays a 503 (retry); scopes a 403; anything else is the text's fault
          const Kind =
            error instanceof ForbiddenError ? ForbiddenError : error instanceof UnavailableError ? UnavailableError : InvalidInputError
          throw new Kind(`changes[${i}].query: ${error.message}`, { cause: error })
        }
        throw error
      }
    }
  }

  /**
   * Files a proposal against the configuration in force. Needs `proposals:create`. The KQL of every
   * created or updated warm query must compile and stay within the token's scopes; the change set
   * must apply and leave a valid configuration, and must change something.
   */
  async function create(caller: Caller, input: unknown, via: ProposalChannel): Promise<Proposal> {
    if (!caller.rights.has('proposals:create'))
      throw new ForbiddenError('this token lacks the right proposals:create needed to file a proposal')
    const parsed = newProposalSchema.safeParse(input)
    if (!parsed.success) throw new InvalidInputError(formatIssues(parsed.error))
    const { rationale, changes } = parsed.data
    await checkKql(caller, changes)
    const author: Person = { id: caller.accountId, name: caller.accountName }
    const proposal = await stores.transaction(async (tx) => {
      const base = await config.currentIn(tx, caller.workspaceId)
      const next = planDocument(base.document, changes)
      const diff = diffChangeSet(base.document, next, changes)
      const idle = diff.entries.filter((e) => e.action === 'unchanged')
      if (idle.length)
        throw new InvalidInputError(
          `the change set changes nothing for ${idle.map((e) => `${e.entity} ${e.id}`).join(', ')}: it already has these values`,
        )
      const created: Proposal = {
        id: newId('prop'),
        workspaceId: caller.workspaceId,
        status: 'open',
        author,
        via,
        rationale,
        changes,
        diff,
        baseCommitId: base.commitId,
        baseSeq: base.seq,
        createdAt: clock.now(),
        decidedAt: undefined,
        decidedBy: undefined,
        decisionReason: undefined,
        commitId: undefined,
      }
      await tx.proposals.insert(created)
      await tx.changes.append({
        workspaceId: created.workspaceId,
        kind: 'proposal',
        entityType: 'proposal',
        entityId: created.id,
        action: 'created',
        actorId: author.id,
        actorName: author.name,
        at: created.createdAt,
        commitId: undefined,
        summary: `proposal by ${author.name}${via === 'mcp' ? ' (through an AI client)' : ''}: ${summariseDiff(diff)}`.slice(0, 1000),
      })
      await activity.recordDecision(
        {
          workspaceId: created.workspaceId,
          entityType: 'proposal',
          entityId: created.id,
          actionType: 'created',
          actor: actorOf(author, via),
          details: { status: 'open', rationale, changes: summariseDiff(diff), baseCommitId: base.commitId ?? null, via },
        },
        tx,
      )
      return created
    })
    return proposal
  }

  /** Marks open proposals the configuration moved away from as superseded (idempotent; any process). */
  async function refresh(workspaceId: string): Promise<void> {
    const open = await stores.proposals.list(workspaceId, { status: 'open', limit: 500 })
    if (open.length === 0) return
    const head = await config.currentIn(stores, workspaceId)
    for (const proposal of open) {
      if (proposal.baseSeq >= head.seq) continue
      const why = staleReason(head.document, proposal)
      if (why === undefined) continue
      await stores.transaction((tx) => supersede(tx, proposal, why))
    }
  }

  /** Why `proposal` no longer applies cleanly to `current`, or undefined when it does. */
  function staleReason(current: WorkspaceConfig, proposal: Proposal): string | undefined {
    const moved = conflicts(
      current,
      proposal.changes,
      proposal.diff.entries.map((e) => e.before ?? undefined),
    )
    if (moved.length) return `the configuration moved underneath it: ${moved.join('; ')}`
    try {
      planDocument(current, proposal.changes)
      return undefined
    } catch (error) {
      if (error instanceof InvalidInputError) return error.message
      throw error
    }
  }

  async function supersede(tx: Stores, proposal: Proposal, reason: string): Promise<Proposal | undefined> {
    const at = clock.now()
    if (!(await tx.proposals.decide(proposal.workspaceId, proposal.id, { status: 'superseded', decidedAt: at, decidedBy: SYSTEM, reason })))
      return undefined
    await tx.changes.append({
      workspaceId: proposal.workspaceId,
      kind: 'proposal',
      entityType: 'proposal',
      entityId: proposal.id,
      action: 'superseded',
      actorId: SYSTEM.id,
      actorName: SYSTEM.name,
      at,
      commitId: undefined,
      summary: `proposal by ${proposal.author.name} superseded: ${reason}`.slice(0, 1000),
    })
    await activity.recordDecision(
      {
        workspaceId: proposal.workspaceId,
        entityType: 'proposal',
        entityId: proposal.id,
        actionType: 'superseded',
        actor: actorOf(SYSTEM, 'system'),
        details: { status: 'superseded', reason, author: proposal.author.name },
      },
      tx,
    )
    return { ...proposal, status: 'superseded', decidedAt: at, decidedBy: SYSTEM, decisionReason: reason }
  }

  async function find(workspaceId: string, id: string): Promise<Proposal | undefined> {
    await refresh(workspaceId)
    return stores.proposals.byId(workspaceId, id)
  }

  async function get(workspaceId: string, id: string): Promise<Proposal> {
    const proposal = await find(workspaceId, id)
    if (!proposal) throw new NotFoundError(`no proposal ${id} in this workspace`)
    return proposal
  }

  async function list(
    workspaceId: string,
    filter: { status?: ProposalStatus; authorId?: string; limit?: number } = {},
  ): Promise<Proposal[]> {
    await refresh(workspaceId)
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500)
    return stores.proposals.list(workspaceId, { ...filter, limit })
  }

  function checkReviewer(reviewer: Reviewer): void {
    if (!roleHas(reviewer.role, 'proposals:review'))
      throw new ForbiddenError(`the ${reviewer.role} role cannot review proposals; an approver or admin can`)
  }

  async function openProposal(tx: Stores, workspaceId: string, id: string): Promise<Proposal> {
    const proposal = await tx.proposals.byId(workspaceId, id)
    if (!proposal) throw new NotFoundError(`no proposal ${id} in this workspace`)
    if (proposal.status !== 'open') {
      const by = proposal.decidedBy ? ` by ${proposal.decidedBy.name}` : ''
      const when = proposal.decidedAt !== undefined ? ` on ${new Date(proposal.decidedAt).toISOString()}` : ''
      throw new InvalidInputError(`proposal ${id} is already ${proposal.status}${by}${when}; only open proposals can be reviewed`)
    }
    return proposal
  }

  /**
   * Accepts an open proposal (portal only). The reviewer needs `proposals:review` (and
   * `warm-queries:approve` when the change set touches warm queries, as it becomes their approver)
   * and must not be the author. When the configuration moved since the proposal was made, the change
   * set is rebased onto the current configuration if every entity it touches is unchanged and the
   * result is valid; otherwise the proposal becomes `superseded` and nothing is committed.
   */
  async function accept(reviewer: Reviewer, workspaceId: string, id: string): Promise<ReviewOutcome> {
    checkReviewer(reviewer)
    const person: Person = { id: reviewer.accountId, name: reviewer.accountName }
    return stores.transaction(async (tx): Promise<ReviewOutcome> => {
      const proposal = await openProposal(tx, workspaceId, id)
      if (proposal.author.id === reviewer.accountId) {
        throw new ForbiddenError('the author of a proposal cannot accept it; another person with review rights must')
      }
      const current = await config.currentIn(tx, workspaceId)
      const why = staleReason(current.document, proposal)
      if (why !== undefined) {
        const superseded = await supersede(tx, proposal, why)
        if (!superseded) throw new InvalidInputError(`proposal ${id} was decided by someone else in the meantime`)
        return { proposal: superseded, commit: undefined }
      }
      const at = clock.now()
      // Deciding first takes the proposal's row lock, so a concurrent acceptance waits and then
      // finds it no longer open instead of committing the change set twice.
      if (!(await tx.proposals.decide(workspaceId, id, { status: 'accepted', decidedAt: at, decidedBy: person }))) {
        throw new InvalidInputError(`proposal ${id} was decided by someone else in the meantime`)
      }
      const next = planDocument(current.document, proposal.changes)
      const firstLine = proposal.rationale.split('\n')[0]!.slice(0, 200)
      const { commit } = await config.commitInTransaction(tx, workspaceId, reviewer, next, {
        message: `proposal ${id} by ${proposal.author.name}: ${firstLine}`,
      })
      if (!commit) throw new InvalidInputError(`proposal ${id} changes nothing in the current configuration`)
      await tx.proposals.setCommit(workspaceId, id, commit.id)
      const rebased = proposal.baseSeq !== current.seq
      await tx.changes.append({
        workspaceId,
        kind: 'proposal',
        entityType: 'proposal',
        entityId: id,
        action: 'accepted',
        actorId: person.id,
        actorName: person.name,
        at,
        commitId: commit.id,
        summary:
          `proposal by ${proposal.author.name} accepted by ${person.name} as commit ${commit.id}${rebased ? ' (rebased)' : ''}: ${summariseDiff(proposal.diff)}`.slice(
            0,
            1000,
          ),
      })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: 'proposal',
          entityId: id,
          actionType: 'accepted',
          actor: actorOf(person, 'portal'),
          details: {
            status: 'accepted',
            commitId: commit.id,
            author: proposal.author.name,
            changes: summariseDiff(proposal.diff),
            ...(rebased ? { rebasedFrom: proposal.baseCommitId ?? null } : {}),
          },
        },
        tx,
      )
      return { proposal: { ...proposal, status: 'accepted', decidedAt: at, decidedBy: person, commitId: commit.id }, commit }
    })
  }

  /** Rejects an open proposal with a reason (portal only; needs `proposals:review`). */
  async function reject(reviewer: Reviewer, workspaceId: string, id: string, reason: string): Promise<Proposal> {
    checkReviewer(reviewer)
    const why = reason.trim()
    if (why === '') throw new InvalidInputError('a rejection needs a reason: the author reads it')
    if (why.length > MAX_REASON_LENGTH) throw new InvalidInputError(`the reason is at most ${MAX_REASON_LENGTH} characters`)
    const person: Person = { id: reviewer.accountId, name: reviewer.accountName }
    return stores.transaction(async (tx) => {
      const proposal = await openProposal(tx, workspaceId, id)
      const at = clock.now()
      if (!(await tx.proposals.decide(workspaceId, id, { status: 'rejected', decidedAt: at, decidedBy: person, reason: why }))) {
        throw new InvalidInputError(`proposal ${id} was decided by someone else in the meantime`)
      }
      await tx.changes.append({
        workspaceId,
        kind: 'proposal',
        entityType: 'proposal',
        entityId: id,
        action: 'rejected',
        actorId: person.id,
        actorName: person.name,
        at,
        commitId: undefined,
        summary: `proposal by ${proposal.author.name} rejected by ${person.name}: ${why}`.slice(0, 1000),
      })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: 'proposal',
          entityId: id,
          actionType: 'rejected',
          actor: actorOf(person, 'portal'),
          details: { status: 'rejected', reason: why, author: proposal.author.name, changes: summariseDiff(proposal.diff) },
        },
        tx,
      )
      return { ...proposal, status: 'rejected' as const, decidedAt: at, decidedBy: person, decisionReason: why }
    })
  }

  return {
    /** Filing and reading: MCP, the portal. */
    proposals: { create, get, find, list },
    /** Accepting and rejecting: the portal only. */
    proposalReview: { accept, reject },
  }
}
