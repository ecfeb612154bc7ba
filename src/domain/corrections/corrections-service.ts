/**
 * @module
 * The corrections log (spec 2.8–2.10, 3, 4.6, 4.7; design §8). A correction documents an edit with
 * a reason category, a reason, and the values before and after; the original is never lost. It is
 * `pending` when the workspace requires approval for it, else `applied` at once; a second person
 * approves (two-person rule) or rejects it with a reason. Every step is recorded in the scope's
 * activity-log container and announced as a workspace change, in the same transaction.
 *
 * Corrections of data rows (`entityType` = `row:<connection lookup>`, `entityId` = row id) check
 * `before` against the row's current values and, when applied, update the row that queries and
 * exports return — in the same transaction as the status change and the log append.
 */
import type { KqlValue } from '../../kql/index.js'
import type { Clock } from '../../shared/clock.js'
import { deepEqual } from '../../shared/deep-equal.js'
import { newId } from '../../shared/ids.js'
import type { JsonValue } from '../../shared/strict-json.js'
import { allowedConnections, type Caller, connectionAllowed, inScope } from '../access/index.js'
import type { ActivityLog } from '../activity/index.js'
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js'
import { toColumnValue } from '../ingest/index.js'
import { acceptSignature, type ConfirmedSignature, type SignatureMeaning } from '../signatures/index.js'
import type { Stores } from '../stores.js'
import type { ConfigService, ConnectionTable, WorkspaceConfig, WorkspaceSettings } from '../workspace-config/index.js'
import type { Correction, CorrectionFilter, CorrectionStatus, CorrectionStoreFilter } from './correction.js'

export interface CreateCorrectionInput {
  readonly scopeKey: string
  readonly entityType: string
  readonly entityId: string
  readonly reasonCategory: string
  readonly reason: string
  readonly before: JsonValue
  readonly after: JsonValue
  readonly effectiveAt?: string | undefined
}

export interface CorrectionsServiceDeps {
  /** Corrections (`corrections`) and connection tables (`config`); the rows they change are written through `tx`. */
  readonly stores: Pick<Stores, 'config' | 'corrections' | 'transaction'>
  readonly config: ConfigService
  readonly activity: ActivityLog
  readonly clock: Clock
}

/**
 * How a decision was taken: over the API, or in the portal as an electronic signature. Never said
 * by the caller: a decision is 'portal' exactly when it carries a ConfirmedSignature, which only the
 * signatures service makes after the password was re-entered (issue 19 item 1).
 */
export type DecisionChannel = 'api' | 'portal'

/** The signature a decision carries; given, it MUST be one the signatures service confirmed for this decision. */
export interface DecisionSignature {
  readonly signature?: ConfirmedSignature
}

/** Spends the decision's signature (403 when forged or for something else) and names its channel. */
function channelOf(caller: Caller, correctionId: string, meaning: SignatureMeaning, options: DecisionSignature): DecisionChannel {
  if (options.signature === undefined) return 'api'
  acceptSignature(options.signature, {
    signerId: caller.accountId,
    subject: { workspaceId: caller.workspaceId, kind: 'correction', id: correctionId },
    meaning,
  })
  return 'portal'
}

const ROW_PREFIX = 'row:'
const MAX_TEXT = 2000

/** Whether the workspace settings require approval for this correction. */
export function approvalRequiredFor(settings: WorkspaceSettings['amendments'], reasonCategory: string, entityType: string): boolean {
  if (!settings.approvalRequired) return false
  const only = settings.approvalRequiredFor
  if (!only || (only.reasonCategories === undefined && only.entityTypes === undefined)) return true
  const byCategory = only.reasonCategories?.includes(reasonCategory) ?? false
  const byType = only.entityTypes?.some((t) => t === entityType || (t.endsWith('*') && entityType.startsWith(t.slice(0, -1)))) ?? false
  return byCategory || byType
}

function text(field: string, value: string, max = 200): string {
  const trimmed = value.trim()
  if (trimmed === '') throw new InvalidInputError(`${field} is required and may not be blank`)
  if (trimmed.length > max) throw new InvalidInputError(`${field} may have at most ${max} characters`)
  return trimmed
}

function sameValue(a: KqlValue, b: KqlValue): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b))
  return typeof a === 'object' || typeof b === 'object' ? deepEqual(a, b) : a === b
}

/**
 * The corrections log (spec 2.8-2.10, 3, 4.6, 4.7). Every operation takes the `Caller` and MUST
 * refuse (ForbiddenError, 403) a scope key or data connection outside the token's scopes; a
 * correction of another scope, or of a row the caller may not see, is NotFoundError (404).
 */
export interface CorrectionsService {
  /**
   * Files a correction (spec 2.8): `pending` when the workspace requires approval for its reason
   * category or entity type, else `applied` at once. The original values MUST be kept (`before`);
   * a row correction (`row:<lookup>`) MUST match the row's current values and, applied, update the
   * row in the same transaction as the correction, its activity-log record and its workspace
   * change. Returns the stored correction. Throws InvalidInputError for a blank or overlong text
   * field, a reason category not in the workspace's list, a malformed effectiveAt, or row values
   * that do not fit the row (or differ from it in `before`); NotFoundError for a missing row.
   */
  create(caller: Caller, input: CreateCorrectionInput): Promise<Correction>
  /**
   * Approves a pending correction and applies it (spec 3). Where the workspace asks for two
   * persons, the approver MUST NOT be its author (ForbiddenError). With a `signature` (the portal) it MUST be one the
   * signatures service confirmed for this approval (ForbiddenError otherwise) and the record says
   * so; without one the decision is the API's. Throws InvalidInputError when the correction is not
   * pending or was decided meanwhile.
   */
  approve(caller: Caller, scopeKey: string, id: string, options?: DecisionSignature & { comment?: string }): Promise<Correction>
  /** Rejects a pending correction with a required reason (spec 3); the entity keeps its values. Signature and errors as `approve`. */
  reject(caller: Caller, scopeKey: string, id: string, reason: string, options?: DecisionSignature): Promise<Correction>
  /** One scope's corrections matching `filter`, with the total; row corrections only of connections the caller may read. */
  list(caller: Caller, filter: Omit<CorrectionFilter, 'workspaceId'>): Promise<{ items: Correction[]; total: number }>
  /**
   * Corrections of every scope (the portal's review list), newest first. Only for a caller whose
   * scopes are not limited to some scope keys; a limited one gets ForbiddenError.
   */
  listAcrossScopes(
    caller: Caller,
    filter: Omit<CorrectionStoreFilter, 'workspaceId' | 'scopeKey'>,
  ): Promise<{ items: Correction[]; total: number }>
  /** The chain of one entity, oldest first by chain link (spec 4.6); the legacy shape reverses it. */
  chain(caller: Caller, scopeKey: string, entityId: string, entityType?: string): Promise<Correction[]>
  /** One correction of a scope; NotFoundError when it is not there or not visible to the caller. */
  get(caller: Caller, scopeKey: string, id: string): Promise<Correction>
}

export function createCorrectionsService(deps: CorrectionsServiceDeps): CorrectionsService {
  const { stores, config, activity, clock } = deps

  function checkScope(caller: Caller, scopeKey: string): void {
    if (!inScope(caller.scopes, 'scopeKeys', scopeKey))
      throw new ForbiddenError(`this token is restricted to other scopes than "${scopeKey}"`)
  }

  interface RowTarget {
    readonly table: ConnectionTable
    readonly rowId: number
    /** Typed new values of the corrected columns. */
    readonly after: ReadonlyMap<string, KqlValue>
    /** Typed expected current values. */
    readonly before: ReadonlyMap<string, KqlValue>
  }

  /** Resolves and checks a `row:<lookup>` correction's target and values (outside any transaction). */
  async function rowTarget(caller: Caller, document: WorkspaceConfig, input: CreateCorrectionInput): Promise<RowTarget | undefined> {
    if (!input.entityType.startsWith(ROW_PREFIX)) return undefined
    const lookup = input.entityType.slice(ROW_PREFIX.length)
    if (!document.connections.some((c) => c.lookup === lookup))
      throw new InvalidInputError(`entityType ${input.entityType}: no data connection "${lookup}" in this workspace`)
    if (!connectionAllowed(caller.scopes, document, lookup))
      throw new ForbiddenError(`this token is restricted to other connections than "${lookup}"`)
    if (!/^[1-9]\d{0,15}$/.test(input.entityId))
      throw new InvalidInputError(`entityId must be the row id (a positive whole number) of a row of ${lookup}, not "${input.entityId}"`)
    const table = (await stores.config.connectionTables(caller.workspaceId)).find((t) => t.lookup === lookup)
    if (!table) throw new InvalidInputError(`data connection "${lookup}" has no table yet`)
    const objectOf = (name: 'before' | 'after', value: JsonValue): Record<string, JsonValue> => {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) {
        throw new InvalidInputError(`${name} must be an object of the corrected columns and their values, e.g. {"temperature": 21.5}`)
      }
      return value as Record<string, JsonValue>
    }
    const after = objectOf('after', input.after)
    const before = objectOf('before', input.before)
    const keys = Object.keys(after).sort()
    if (!deepEqual(keys, Object.keys(before).sort()))
      throw new InvalidInputError(`before and after must name the same columns (after has ${keys.join(', ')})`)
    const typed = (values: Record<string, JsonValue>, name: string) =>
      new Map(
        keys.map((column) => {
          const declared = table.columns.find((c) => c.name === column)
          if (!declared)
            throw new InvalidInputError(
              `${name}.${column}: ${lookup} has no column "${column}" (columns: ${table.columns.map((c) => c.name).join(', ')})`,
            )
          try {
            const value = toColumnValue(declared.type, values[column])
            if (column === 'timestamp' && value === null) throw new Error('the timestamp cannot be null')
            return [column, value] as const
          } catch (error) {
            throw new InvalidInputError(`${name}.${column}: ${(error as Error).message}`)
          }
        }),
      )
    return { table, rowId: Number(input.entityId), after: typed(after, 'after'), before: typed(before, 'before') }
  }

  /**
   * Checks the row still holds `before` and, when `apply`, writes `after` (inside the transaction).
   * `whileLocked` runs once the row is locked, before the values are compared: a check that must
   * see every correction committed before this one (the row's scope binding).
   */
  async function applyToRow(tx: Stores, target: RowTarget, apply: boolean, whileLocked?: () => Promise<void>): Promise<void> {
    const row = await tx.data.row(target.table, target.rowId, { forUpdate: true })
    if (!row) throw new NotFoundError(`no row ${target.rowId} in data connection ${target.table.lookup}`)
    await whileLocked?.()
    for (const [column, expected] of target.before) {
      const current = row.values[target.table.columns.findIndex((c) => c.name === column)] ?? null
      if (!sameValue(current, expected)) {
        throw new InvalidInputError(
          `row ${target.rowId} of ${target.table.lookup} no longer holds the "before" value of ${column} (someone corrected it meanwhile); read the row again and resend`,
        )
      }
    }
    if (apply) await tx.data.updateRow(target.table, target.rowId, target.after)
  }

  /**
   * One correction chain per data row (issue 14 item 5; docs/decisions.md): the row's first
   * correction binds it to that ScopeKey, and a correction under another scope is refused, so the
   * chain never splits and its first "before" is the original value. The refusal names the binding
   * scope only to a caller who may read it. Runs with the row locked, so two first corrections
   * racing under two scopes are serialised and the second sees the first.
   */
  async function checkRowScope(tx: Stores, caller: Caller, scopeKey: string, target: RowTarget, entityType: string): Promise<void> {
    const bound = await tx.corrections.firstScopeOf(caller.workspaceId, entityType, String(target.rowId))
    if (bound === undefined || bound === scopeKey) return
    const where = inScope(caller.scopes, 'scopeKeys', bound) ? `; correct it in scope "${bound}"` : ''
    throw new InvalidInputError(
      `row ${target.rowId} of ${target.table.lookup} already has corrections in another scope, and a row's corrections form one chain in the scope of its first correction${where}`,
    )
  }

  async function targetOf(caller: Caller, correction: Correction, document: WorkspaceConfig): Promise<RowTarget | undefined> {
    return rowTarget(caller, document, { ...correction })
  }

  function record(
    tx: Stores,
    caller: Caller,
    correction: Correction,
    actionType: string,
    details: Record<string, unknown>,
    channel: DecisionChannel,
  ) {
    return activity.recordDecision(
      {
        workspaceId: caller.workspaceId,
        scopeKey: correction.scopeKey,
        entityType: correction.entityType,
        entityId: correction.entityId,
        actionType,
        actor: { id: caller.accountId, name: caller.accountName, via: caller.via === 'mcp' ? 'mcp' : channel },
        details: {
          correctionId: correction.id,
          chainIndex: correction.chainIndex,
          reasonCategory: correction.reasonCategory,
          reason: correction.reason,
          before: correction.before,
          after: correction.after,
          ...details,
        },
      },
      tx,
    )
  }

  function announce(tx: Stores, caller: Caller, correction: Correction, action: string, at: number) {
    return tx.changes.append({
      workspaceId: caller.workspaceId,
      kind: 'correction',
      entityType: 'correction',
      entityId: correction.id,
      action,
      actorId: caller.accountId,
      actorName: caller.accountName,
      at,
      commitId: undefined,
      summary: `correction ${correction.id} of ${correction.entityType} ${correction.entityId} in scope ${correction.scopeKey} ${action}`,
    })
  }

  async function create(caller: Caller, input: CreateCorrectionInput): Promise<Correction> {
    const scopeKey = text('ScopeKey', input.scopeKey)
    checkScope(caller, scopeKey)
    const entityType = text('entityType', input.entityType)
    const entityId = text('entityId', input.entityId)
    const reason = text('reason', input.reason, MAX_TEXT)
    const { document } = await config.current(caller.workspaceId)
    const categories = document.reasonCategories.map((c) => c.id)
    if (!categories.includes(input.reasonCategory)) {
      throw new InvalidInputError(
        `reasonCategory "${input.reasonCategory}" is not in this workspace's list; use one of ${categories.join(', ')}`,
      )
    }
    let effectiveAt: string | undefined
    if (input.effectiveAt !== undefined) {
      const ms = Date.parse(input.effectiveAt)
      if (!/^\d{4}-\d{2}-\d{2}/.test(input.effectiveAt) || Number.isNaN(ms))
        throw new InvalidInputError(`effectiveAt must be an ISO 8601 time, not "${input.effectiveAt}"`)
      effectiveAt = new Date(ms).toISOString()
    }
    const normalised = { ...input, scopeKey, entityType, entityId, reason }
    const target = await rowTarget(caller, document, normalised)
    const approvalRequired = approvalRequiredFor(document.settings.amendments, input.reasonCategory, entityType)
    return stores.transaction(async (tx) => {
      const chainIndex = await tx.corrections.nextChainIndex(caller.workspaceId, scopeKey, entityType, entityId)
      const previous = chainIndex > 1 ? await tx.corrections.latestOf(caller.workspaceId, scopeKey, entityType, entityId) : undefined
      if (target) await applyToRow(tx, target, !approvalRequired, () => checkRowScope(tx, caller, scopeKey, target, entityType))
      const at = clock.now()
      const correction: Correction = {
        id: newId('amd'),
        workspaceId: caller.workspaceId,
        scopeKey,
        entityType,
        entityId,
        chainIndex,
        previousId: previous?.id,
        reasonCategory: input.reasonCategory,
        reason,
        before: input.before,
        after: input.after,
        amendedBy: { id: caller.accountId, name: caller.accountName },
        status: approvalRequired ? 'pending' : 'applied',
        approvalRequired,
        createdAt: at,
        effectiveAt,
        decidedAt: undefined,
        decidedBy: undefined,
        rejectionReason: undefined,
        decidedVia: undefined,
      }
      await tx.corrections.insert(correction)
      await record(
        tx,
        caller,
        correction,
        'correction-created',
        { status: correction.status, approvalRequired, ...(effectiveAt ? { effectiveAt } : {}) },
        'api',
      )
      await announce(tx, caller, correction, correction.status === 'applied' ? 'applied' : 'created', at)
      return correction
    })
  }

  async function pendingOf(caller: Caller, scopeKey: string, id: string): Promise<Correction> {
    checkScope(caller, scopeKey)
    const correction = await stores.corrections.byId(caller.workspaceId, id)
    if (!correction || correction.scopeKey !== scopeKey) throw new NotFoundError(`no correction ${id} in scope "${scopeKey}"`)
    if (correction.status !== 'pending')
      throw new InvalidInputError(
        `correction ${id} is ${correction.status}, not pending; only a pending correction can be approved or rejected`,
      )
    return correction
  }

  /** Approves a pending correction and applies it (spec 3). Two-person rule: the approver is not the author. */
  async function approve(
    caller: Caller,
    scopeKey: string,
    id: string,
    options: DecisionSignature & { comment?: string } = {},
  ): Promise<Correction> {
    const correction = await pendingOf(caller, scopeKey, id)
    const { document } = await config.current(caller.workspaceId)
    if (document.settings.amendments.twoPersonApproval && correction.amendedBy.id === caller.accountId) {
      throw new ForbiddenError(
        `two-person approval is on: ${caller.accountName} wrote correction ${id} and cannot also approve it; another approver must`,
      )
    }
    const target = await targetOf(caller, correction, document)
    const channel = channelOf(caller, id, 'approved', options)
    return stores.transaction(async (tx) => {
      if (target) await applyToRow(tx, target, true)
      const at = clock.now()
      const by = { id: caller.accountId, name: caller.accountName }
      if (
        !(await tx.corrections.decide(caller.workspaceId, id, {
          status: 'applied',
          at,
          by,
          reason: options.comment?.trim() || undefined,
          via: channel,
        }))
      ) {
        throw new InvalidInputError(`correction ${id} was decided by someone else meanwhile`)
      }
      const comment = options.comment?.trim() || undefined
      const decided: Correction = {
        ...correction,
        status: 'applied',
        decidedAt: at,
        decidedBy: by,
        decidedVia: channel,
        approvalComment: comment,
      }
      await record(
        tx,
        caller,
        decided,
        'correction-approved',
        {
          status: 'applied',
          approvedBy: by.name,
          ...(options.comment ? { comment: options.comment } : {}),
          ...(channel === 'portal' ? { signature: { signer: by.name, signedAt: new Date(at).toISOString(), meaning: 'approved' } } : {}),
        },
        channel,
      )
      await announce(tx, caller, decided, 'approved', at)
      return decided
    })
  }

  /** Rejects a pending correction with a reason (spec 3); the entity keeps its values. */
  async function reject(
    caller: Caller,
    scopeKey: string,
    id: string,
    reason: string,
    options: DecisionSignature = {},
  ): Promise<Correction> {
    const why = text('reason', reason ?? '', MAX_TEXT)
    const correction = await pendingOf(caller, scopeKey, id)
    const channel = channelOf(caller, id, 'rejected', options)
    return stores.transaction(async (tx) => {
      const at = clock.now()
      const by = { id: caller.accountId, name: caller.accountName }
      if (!(await tx.corrections.decide(caller.workspaceId, id, { status: 'rejected', at, by, reason: why, via: channel }))) {
        throw new InvalidInputError(`correction ${id} was decided by someone else meanwhile`)
      }
      const decided: Correction = {
        ...correction,
        status: 'rejected',
        decidedAt: at,
        decidedBy: by,
        rejectionReason: why,
        decidedVia: channel,
      }
      await record(
        tx,
        caller,
        decided,
        'correction-rejected',
        {
          status: 'rejected',
          rejectedBy: by.name,
          rejectionReason: why,
          ...(channel === 'portal' ? { signature: { signer: by.name, signedAt: new Date(at).toISOString(), meaning: 'rejected' } } : {}),
        },
        channel,
      )
      await announce(tx, caller, decided, 'rejected', at)
      return decided
    })
  }

  /**
   * The connections whose row corrections a token limited to some connections or surfaces may
   * read; undefined when it is not limited. The change stream hides the same ones (issue 14 item 6).
   */
  async function rowConnectionsOf(caller: Caller): Promise<readonly string[] | undefined> {
    if (caller.scopes.connections === undefined && caller.scopes.surfaces === undefined) return undefined
    const { document } = await config.current(caller.workspaceId)
    return [...(allowedConnections(caller.scopes, document) ?? [])]
  }

  function rowVisible(correction: Correction, rowConnections: readonly string[] | undefined): boolean {
    if (rowConnections === undefined || !correction.entityType.startsWith(ROW_PREFIX)) return true
    return rowConnections.includes(correction.entityType.slice(ROW_PREFIX.length))
  }

  async function list(caller: Caller, filter: Omit<CorrectionFilter, 'workspaceId'>): Promise<{ items: Correction[]; total: number }> {
    checkScope(caller, filter.scopeKey)
    const rowConnections = await rowConnectionsOf(caller)
    return stores.corrections.query({ ...filter, workspaceId: caller.workspaceId, ...(rowConnections ? { rowConnections } : {}) })
  }

  /**
   * Corrections of every scope (the portal's review list), newest first. Only for a caller whose
   * scopes are not limited to some scope keys (a portal session never is); a limited one is refused.
   */
  async function listAcrossScopes(
    caller: Caller,
    filter: Omit<CorrectionStoreFilter, 'workspaceId' | 'scopeKey'>,
  ): Promise<{ items: Correction[]; total: number }> {
    if (caller.scopes.scopeKeys !== undefined)
      throw new ForbiddenError('listing the corrections of every scope needs access to every scope key')
    return stores.corrections.query({ ...filter, workspaceId: caller.workspaceId })
  }

  /** The chain of one entity, oldest first by chain link (spec 4.6); the legacy shape reverses it. */
  async function chain(caller: Caller, scopeKey: string, entityId: string, entityType?: string): Promise<Correction[]> {
    checkScope(caller, scopeKey)
    const rowConnections = await rowConnectionsOf(caller)
    if (entityType !== undefined) {
      if (entityType.startsWith(ROW_PREFIX) && rowConnections && !rowConnections.includes(entityType.slice(ROW_PREFIX.length)))
        throw new ForbiddenError(`this token is restricted to other connections than "${entityType.slice(ROW_PREFIX.length)}"`)
      return stores.corrections.chainOf(caller.workspaceId, scopeKey, entityType, entityId)
    }
    const { items } = await stores.corrections.query({
      workspaceId: caller.workspaceId,
      scopeKey,
      entityId,
      limit: 100_000,
      offset: 0,
      ...(rowConnections ? { rowConnections } : {}),
    })
    const types = [...new Set(items.map((c) => c.entityType))].sort()
    const chains = await Promise.all(types.map((t) => stores.corrections.chainOf(caller.workspaceId, scopeKey, t, entityId)))
    return chains.flat()
  }

  async function get(caller: Caller, scopeKey: string, id: string): Promise<Correction> {
    checkScope(caller, scopeKey)
    const correction = await stores.corrections.byId(caller.workspaceId, id)
    if (!correction || correction.scopeKey !== scopeKey || !rowVisible(correction, await rowConnectionsOf(caller)))
      throw new NotFoundError(`no correction ${id} in scope "${scopeKey}"`)
    return correction
  }

  return { create, approve, reject, list, listAcrossScopes, chain, get }
}

export type { Correction, CorrectionStatus }
