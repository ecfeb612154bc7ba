/**
 * @module
 * The activity log as the rest of the domain sees it: every decision (token created or revoked,
 * configuration applied, export created, correction approved, proposal accepted, ingest batch, …)
 * appends a record (spec 1: "every call and decision is recorded"; design §5).
 */
import type { Stores } from '../stores.js'

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
  /** Facts of the decision (never a secret or a token). */
  readonly details: Readonly<Record<string, unknown>>
}

export interface ActivityLog {
  /**
   * Appends a decision record. With `tx`, the record commits with the change itself; without, it
   * is committed on its own. MUST resolve only after the record is durably committed.
   */
  recordDecision(input: DecisionInput, tx?: Stores): Promise<void>
}
