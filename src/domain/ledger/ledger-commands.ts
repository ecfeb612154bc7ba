/**
 * @module
 * The activity log's commands as the edges call them (spec 2.6, 2.7, 4.5, 4.7; issue 19 item 1).
 * Each takes the caller and the spec's raw inputs (a scope key or none, a RecordID exactly as sent)
 * and decides everything itself: which container, whether the caller may use it, whether the
 * RecordID is well formed. It throws only errors of the one catalogue (src/domain/errors.ts): the
 * ledger's own outcomes (a RecordID past the tip, an unusable TrustedCheckpoint, a proof range the
 * container does not have) are mapped here, so an edge only translates wire to domain and back.
 *
 * The container-level LedgerService behind it stays what the domain's own features (decisions,
 * call records), operator tools on the server's machine (the CLI) and tests use.
 */
import type { Readable } from 'node:stream'
import type { Caller } from '../access/index.js'
import { inScope } from '../access/index.js'
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js'
import type { ExportFormat } from './export-format.js'
import {
  type CheckpointInfo,
  type ConsistencyProofResult,
  headsContainer,
  type InclusionProofResult,
  type LedgerRecordView,
  type LedgerService,
  platformContainer,
  scopeContainer,
  viewOf,
} from './ledger-service.js'
import type { RecordFilter, RecordPage } from './ledger-store.js'
import type { ContainerRef } from './ledger-types.js'
import { recordSeqOf } from './record-id.js'
import type { VerifyResult, VerifyVerdict } from './verify-chain.js'

/** Which log a command names: a scope's, or the workspace's Platform-Config records (none given). */
export interface LogRef {
  /** The ScopeKey as sent; undefined or null names the Platform-Config records (spec 4.5 rule 1). */
  readonly scopeKey?: string | null
}

/**
 * An event to append (spec 2.6): what the caller may say, plus every other field of the body as
 * sent. userId (the actor), timestamp, RecordID and the digests are the server's: append refuses a
 * body naming one (or any field that is not an event's) before anything is read or queued.
 */
export interface AppendInput {
  readonly scopeKey: string
  readonly entityType?: string | null
  readonly entityId?: string | null
  readonly actionType?: string | null
  readonly details?: Readonly<Record<string, unknown>> | null
  /** Any other body field, exactly as sent (name and value): each one is a 400. */
  readonly [otherField: string]: unknown
}

/**
 * The call's own `api-call` record (spec 1), which the edge hands to append so that it shares the
 * event's group commit (one commit per append instead of two; issue 19 item 4). Its status is the
 * one the reply has when the event commits; the edge re-records the call if the reply differs.
 */
export interface PendingCallRecord {
  /** Queues the record; MUST only queue (synchronously, never throwing), in the event's turn. */
  queue(): void
}

/** The fields of an event a caller may send (spec 2.6), in the order the refusal names them. */
const EVENT_FIELDS = ['ScopeKey', 'entityType', 'entityId', 'actionType', 'details'] as const

/** Fields the server sets (lower-cased): a body naming one is refused with this explanation. */
const SERVER_SET: Readonly<Record<string, string>> = {
  userid: 'userId is set by the server from the token',
  actor: 'the actor is set by the server from the token',
  user: 'the user is set by the server from the token',
  timestamp: "the timestamp is set by the server's clock",
  recordid: 'the RecordID is assigned by the server',
  digest: 'digests are computed by the server',
  previousdigest: 'digests are computed by the server',
  prevdigest: 'digests are computed by the server',
  hash: 'digests are computed by the server',
}

/** Why a body with these fields (none of them an event's) is refused: server-set ones first. */
function unexpectedFieldsMessage(keys: readonly string[]): string {
  const serverSet = keys.filter((k) => SERVER_SET[k.toLowerCase()] !== undefined)
  if (serverSet.length > 0)
    return `${serverSet.map((k) => `"${k}"`).join(', ')} cannot be sent: ${SERVER_SET[serverSet[0]!.toLowerCase()]!} and is never supplied by the caller`
  return `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}; an event has ${EVENT_FIELDS.join(', ')}`
}

const INPUT_FIELDS: ReadonlySet<string> = new Set(['scopeKey', 'entityType', 'entityId', 'actionType', 'details'])

/** Refuses (400) a body that sends a server-set field or any field an event does not have. */
function refuseUnexpectedFields(input: AppendInput): void {
  const unexpected = Object.keys(input).filter((k) => !INPUT_FIELDS.has(k))
  if (unexpected.length > 0) throw new InvalidInputError(unexpectedFieldsMessage(unexpected))
}

export interface VerifyInput extends LogRef {
  /** The RecordID as sent (any JSON value); null or undefined checks no single record (rule 2). */
  readonly recordId?: unknown
  readonly trustedCheckpoint?: string | null
}

export interface VerifyAnswer {
  readonly verdict: VerifyVerdict
  /** Records read from the container (the per-log shape's recordCount). */
  readonly recordsRead: number
}

export interface ExportInput extends LogRef {
  readonly format: ExportFormat
  /** Stored-form timestamps: [from, to). */
  readonly from?: string
  readonly to?: string
  /** What the caller asked for, written into the header (informative). */
  readonly filter?: Readonly<Record<string, string>>
}

/** The activity log for a caller: every method authorises and parses its raw input itself. */
export interface LedgerCommands {
  /**
   * The container a scope key names for this caller (spec 4.5 rule 1). MUST refuse (403) a scope
   * key outside a token's scope-key limit, and the Platform-Config records to any token with such
   * a limit (they span every scope).
   */
  containerFor(caller: Caller, scopeKey: string | null | undefined): ContainerRef
  /**
   * Checks and queues one event, then the call's record right after it in the same turn, so both
   * share one group commit. MUST refuse (400) a body sending a server-set field (userId, actor,
   * timestamp, RecordID, a digest) or any other field an event lacks, and MUST throw before
   * queueing anything (the event or the call's record) when the body or the scope is refused. The
   * actor is the caller's account. Resolves with the stored record once its commit is durable.
   * `call` is null for an edge that records its calls otherwise (none today).
   */
  append(caller: Caller, input: AppendInput, call: PendingCallRecord | null): Promise<LedgerRecordView>
  /** One page of the container's records matching the filter, and their total count. */
  query(
    caller: Caller,
    input: LogRef & { readonly filter: RecordFilter; readonly page: RecordPage },
  ): Promise<{ records: LedgerRecordView[]; total: number }>
  /**
   * Whole-chain verify (spec 4.5 rules 2-5). MUST refuse a malformed RecordID (400) before reading
   * anything (rule 4); a well-formed one past the tip is a 404; an unusable TrustedCheckpoint a 400.
   */
  verify(caller: Caller, input: VerifyInput): Promise<VerifyAnswer>
  /** Streams the container's export (spec 4.5 `format`), header to seal, from one read snapshot. */
  exportLog(caller: Caller, input: ExportInput): Promise<{ readonly contentType: string; readonly stream: Readable }>
  /**
   * The newest signed checkpoint of the named log, or of the workspace heads log (`headsLog`, which
   * names no scope: the Platform-Config rule applies). 404 when nothing was ever appended.
   */
  latestCheckpoint(caller: Caller, input: LogRef & { readonly headsLog?: boolean }): Promise<CheckpointInfo>
  /** RFC 9162 inclusion proof of a RecordID as sent (parsed as in verify; MUST be given). */
  proveInclusion(caller: Caller, input: LogRef & { readonly recordId: unknown; readonly treeSize?: number }): Promise<InclusionProofResult>
  proveConsistency(caller: Caller, input: LogRef & { readonly from: number; readonly to?: number }): Promise<ConsistencyProofResult>
  /**
   * Verify of any named container for an operator on the server's own machine (the CLI: no caller,
   * every container, the heads log included). Parses the RecordID as verify does (400 when
   * malformed) and returns every outcome, so one line can be printed per container.
   */
  verifyContainer(container: ContainerRef, input: Omit<VerifyInput, 'scopeKey'>): Promise<VerifyResult>
}

/** What the API and the portal are given of the activity log: the commands, and what is public. */
export type EdgeLedger = Omit<LedgerCommands, 'verifyContainer'> & Pick<LedgerService, 'publicKey' | 'trustedKeys' | 'containers'>

/** The verdict, or the catalogue error the ledger's other outcomes are (404, 400). */
export function verifyAnswerOf(result: VerifyResult): VerifyAnswer {
  if (result.kind === 'record-not-found') throw new NotFoundError(result.message)
  if (result.kind === 'invalid-trusted-checkpoint') throw new InvalidInputError(result.message)
  return { verdict: result.verdict, recordsRead: result.facts.recordsRead }
}

export function createLedgerCommands(ledger: LedgerService): LedgerCommands {
  function containerFor(caller: Caller, scopeKey: string | null | undefined): ContainerRef {
    if (scopeKey === undefined || scopeKey === null) {
      if (caller.scopes.scopeKeys !== undefined) {
        throw new ForbiddenError(
          `this token is limited to the scope keys ${caller.scopes.scopeKeys.join(', ')}; the Platform-Config records need a token without a scope-key limit`,
        )
      }
      return platformContainer(caller.workspaceId)
    }
    if (!inScope(caller.scopes, 'scopeKeys', scopeKey))
      throw new ForbiddenError(`this token is limited to other scope keys than "${scopeKey}"`)
    return scopeContainer(caller.workspaceId, scopeKey)
  }

  function append(caller: Caller, input: AppendInput, call: PendingCallRecord | null): Promise<LedgerRecordView> {
    refuseUnexpectedFields(input)
    const container = containerFor(caller, input.scopeKey)
    const { scopeKey, ...fields } = input
    const prepared = ledger.prepareAppend([{ userId: caller.accountId, body: { ...fields, ScopeKey: scopeKey } }])
    const appended = ledger.submitPrepared(container, prepared)
    call?.queue()
    return appended.then(([record]) => viewOf(record!))
  }

  return {
    containerFor,
    append,
    query: (caller, input) => ledger.query(containerFor(caller, input.scopeKey), input.filter, input.page),
    async verify(caller, input) {
      const container = containerFor(caller, input.scopeKey)
      const recordSeq = recordSeqOf(input.recordId)
      return verifyAnswerOf(await ledger.verify({ container, recordSeq, trustedCheckpoint: input.trustedCheckpoint ?? null }))
    },
    async exportLog(caller, input) {
      const { format, from, to, filter } = input
      return ledger.exportLog({
        container: containerFor(caller, input.scopeKey),
        scopeKey: input.scopeKey ?? null,
        format,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(filter !== undefined ? { filter } : {}),
      })
    },
    async latestCheckpoint(caller, input) {
      if (input.headsLog === true && input.scopeKey != null) throw new InvalidInputError('give scopeKey or headsLog=true, not both')
      const container =
        input.headsLog === true ? headsContainer(containerFor(caller, null).workspaceId) : containerFor(caller, input.scopeKey)
      const cp = await ledger.latestCheckpoint(container)
      if (cp === null) throw new NotFoundError('no checkpoint yet: nothing has been appended to this log')
      return cp
    },
    async proveInclusion(caller, input) {
      const container = containerFor(caller, input.scopeKey)
      const seq = recordSeqOf(input.recordId, { required: true })
      return ledger.proveInclusion(container, seq, input.treeSize)
    },
    proveConsistency: async (caller, input) => ledger.proveConsistency(containerFor(caller, input.scopeKey), input.from, input.to),
    async verifyContainer(container, input) {
      const recordSeq = recordSeqOf(input.recordId)
      return ledger.verify({ container, recordSeq, trustedCheckpoint: input.trustedCheckpoint ?? null })
    },
  }
}
