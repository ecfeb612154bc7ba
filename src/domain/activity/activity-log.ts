/**
 * @module
 * "Every call and decision is recorded" (spec 1; design §5): each /oi-api call appends an
 * `api-call` record, and each decision (token created or revoked, configuration applied, ingest
 * batch, and the approvals, rejections, acceptances and exports later capabilities add) appends
 * its own record, to the workspace-level Platform-Config container or the scope's container. The
 * records go through the ledger (docs/decisions.md lists the entityType/actionType vocabulary).
 */

import type { JsonObject } from '../../shared/strict-json.js'
import { IntegrityError, UnavailableError } from '../errors.js'
import { type LedgerService, platformContainer, scopeContainer } from '../ledger/index.js'
import type { Stores } from '../stores.js'
import { openTransaction } from '../unit-of-work.js'

export interface Actor {
  readonly id: string
  readonly name: string
  /** How the actor acted: through the API, the portal, the CLI, or an AI client over MCP. */
  readonly via: 'api' | 'portal' | 'cli' | 'mcp' | 'system'
}

export interface DecisionInput {
  readonly workspaceId: string
  /** The scope's container; undefined for the workspace-level Platform-Config container. */
  readonly scopeKey?: string
  /** What the decision is about, e.g. `token`, `config`, `export`, `correction`, `proposal`. */
  readonly entityType: string
  readonly entityId: string
  /** What was decided, e.g. `created`, `revoked`, `applied`, `approved`, `rejected`, `accepted`. */
  readonly actionType: string
  readonly actor: Actor
  /** Facts of the decision (plain JSON; never a secret or a token). */
  readonly details: Readonly<Record<string, unknown>>
}

/** One /oi-api call as the HTTP layer describes it (http/plugins/record-call.ts). */
export interface ApiCall {
  readonly method: string
  /** The route template, never the raw URL (no query strings, no secrets). */
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly requestId: string
  readonly clientAddress: string
  readonly tokenId: string | undefined
  readonly accountId: string | undefined
  readonly accountName: string | undefined
  /** Set when an AI client acted for the token's owner (MCP), with the tool name. */
  readonly via?: { readonly kind: 'mcp'; readonly tool?: string }
}

export interface ActivityLog {
  /**
   * Appends a decision record. Inside a transaction (`tx`, or the one the caller runs in: see
   * src/domain/unit-of-work.ts) the record commits with the change itself (call it last in the
   * transaction: on PostgreSQL it holds the container's lock until the commit); outside one it is
   * committed on its own. MUST resolve only after the record is durably committed (in a
   * transaction: it commits when the transaction does).
   */
  recordDecision(input: DecisionInput, tx?: Stores): Promise<void>
  /**
   * Appends the `api-call` record of one call to the Platform-Config container and resolves once it
   * is committed. Rejects with UnavailableError (503) when it cannot be recorded: the call must then
   * fail rather than go unrecorded.
   */
  recordCall(workspaceId: string, call: ApiCall): Promise<void>
}

/** entityType of call records. */
export const API_CALL_ENTITY_TYPE = 'api-call'

/** userId of records with no account behind them (the server itself, a connector). */
export const SYSTEM_ACTOR: Actor = { id: 'system', name: 'Provenant', via: 'system' }

function withoutUndefined(o: Record<string, unknown>): JsonObject {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v
  return out as JsonObject
}

/**
 * Decision details as plain JSON, the way JSON.stringify would see them, so a record never fails
 * (and takes its change's transaction down with it) over a value the canonical form refuses:
 * undefined members are dropped (null in arrays), bigints become numbers when exact and decimal
 * strings otherwise (datetime ticks), Dates ISO strings, bytes base64, non-finite numbers null,
 * Maps and Sets objects and arrays. A cycle is a programming error and throws.
 */
export function jsonSafe(value: unknown, seen: object[] = []): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) ? value : null
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
  }
  if (value === null) return null
  const o = value as object
  if (seen.includes(o)) throw new TypeError('decision details must not contain a cycle')
  if (o instanceof Date) return Number.isNaN(o.getTime()) ? null : o.toISOString()
  if (o instanceof Uint8Array) return Buffer.from(o).toString('base64')
  const inner = [...seen, o]
  if (Array.isArray(o) || o instanceof Set) return [...(o as Iterable<unknown>)].map((v) => jsonSafe(v, inner) ?? null)
  const entries = o instanceof Map ? [...o].map(([k, v]) => [String(k), v] as const) : Object.entries(o)
  const out: Record<string, unknown> = {}
  for (const [k, v] of entries) {
    const safe = jsonSafe(v, inner)
    if (safe !== undefined) out[k] = safe
  }
  return out
}

export function createActivityLog(deps: { readonly ledger: LedgerService }): ActivityLog {
  const { ledger } = deps
  return {
    async recordDecision(input, tx) {
      const container =
        input.scopeKey === undefined ? platformContainer(input.workspaceId) : scopeContainer(input.workspaceId, input.scopeKey)
      const request = {
        userId: input.actor.id,
        body: {
          ScopeKey: input.scopeKey ?? null,
          entityType: input.entityType,
          entityId: input.entityId,
          actionType: input.actionType,
          details: jsonSafe({ ...input.details, actor: { name: input.actor.name, via: input.actor.via } }) as JsonObject,
        },
      }
      const within = tx ?? openTransaction()
      if (within) await ledger.appendInTransaction(within, container, [request])
      else await ledger.append(container, [request])
    },

    async recordCall(workspaceId, call) {
      const details = withoutUndefined({
        method: call.method,
        route: call.route,
        status: call.status,
        durationMs: call.durationMs,
        requestId: call.requestId,
        tokenId: call.tokenId,
        accountName: call.accountName,
        clientAddress: call.clientAddress,
        via: call.via ? withoutUndefined({ ...call.via }) : undefined,
      })
      try {
        await ledger.append(platformContainer(workspaceId), [
          {
            userId: call.accountId ?? 'anonymous',
            body: {
              ScopeKey: null,
              entityType: API_CALL_ENTITY_TYPE,
              entityId: call.requestId,
              actionType: `${call.method} ${call.route}`,
              details,
            },
          },
        ])
      } catch (error) {
        // A log that failed its integrity check is no passing outage: say so (500), not "retry".
        if (error instanceof IntegrityError) throw error
        throw new UnavailableError('the activity log could not record this call, so it was not completed; retry shortly', { cause: error })
      }
    },
  }
}
