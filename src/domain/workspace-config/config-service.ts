/**
 * @module
 * Configuration as code (design §4): read the current configuration, and apply a new document as
 * one commit — validated whole, physical tables changed in the same transaction, warm queries
 * approved by the applying account when it may approve them, nothing half-applied.
 */
import { createHash } from 'node:crypto'
import type { Clock } from '../../shared/clock.js'
import { type Role, roleHas } from '../access/index.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import { ForbiddenError, InvalidInputError } from '../errors.js'
import type { Stores } from '../stores.js'
import { type ConfigChange, describeChanges, diffConfig } from './config-diff.js'
import { type ConnectionConfig, emptyConfig, type WorkspaceConfig } from './config-document.js'
import type { ConfigCommit, ConnectionTable, WarmQueryApproval } from './config-store.js'
import { validateConfig } from './validate-config.js'

export interface ConfigActor {
  readonly accountId: string
  readonly accountName: string
  readonly role: Role
}

/** The configuration in force: the head commit's document and approvals (empty before the first apply). */
export interface CurrentConfig {
  readonly seq: number
  readonly commitId: string | undefined
  readonly document: WorkspaceConfig
  readonly approvals: Readonly<Record<string, WarmQueryApproval>>
}

export interface ApplyResult {
  readonly changes: readonly ConfigChange[]
  /** Undefined for a dry run or when nothing changed. */
  readonly commit: ConfigCommit | undefined
}

export interface ConfigServiceDeps {
  /** Commits and tables (`config`), in one transaction with the change row it appends. */
  readonly stores: Pick<Stores, 'config' | 'transaction'>
  readonly clock: Clock
  /** Applying configuration is a decision: recorded with the commit (spec 1). */
  readonly activity: ActivityLog
  /** How long a process may serve a cached configuration before re-reading it (cross-process staleness bound). */
  readonly cacheMs?: number
}

/** Physical table name for a connection: derived from ids only, so no user text reaches DDL. */
export function connectionTableName(workspaceId: string, lookup: string): string {
  return `data_${createHash('sha256').update(`${workspaceId}\n${lookup}`).digest('hex').slice(0, 20)}`
}

/** The declared contract of configuration as code (design §4); `createConfigService` is checked against it. */
export interface ConfigService {
  /**
   * The configuration in force (the head commit, or an empty document with `seq` 0 before the first
   * apply). MAY be served from a cache for at most `cacheMs`; local applies invalidate it at once.
   */
  current(workspaceId: string): Promise<CurrentConfig>
  /** Drops this process's cached configuration of the workspace. */
  invalidate(workspaceId: string): void
  /**
   * Validates `document` whole and commits it with its physical table changes in one transaction.
   * MUST refuse an actor whose role cannot apply configuration (ForbiddenError), a bad document with
   * every problem and its path, a document for another workspace, or a change that would lose
   * stored rows (InvalidInputError), and MUST write nothing unless everything succeeds. The actor
   * becomes the approver of every warm query the commit adds or changes (ForbiddenError when it may
   * not approve them). Returns the changes and the commit (undefined for a dry run or no change).
   */
  apply(
    workspaceId: string,
    actor: ConfigActor,
    document: unknown,
    options?: { message?: string; dryRun?: boolean; workspaceName?: string; via?: Actor['via'] },
  ): Promise<ApplyResult>
  /**
   * As `apply`, inside the caller's transaction `tx` (an accepted proposal commits with its status
   * change and change row); the caller has already authorised the actor.
   */
  commitInTransaction(
    tx: Stores,
    workspaceId: string,
    actor: ConfigActor,
    document: unknown,
    options: { message: string; via?: Actor['via'] },
  ): Promise<ApplyResult>
  /** The configuration in force as `tx` sees it (uncached), for decisions taken in a transaction. */
  currentIn(tx: Pick<Stores, 'config'>, workspaceId: string): Promise<CurrentConfig>
  /** The configuration in force read now, bypassing this process's cache (another process may just have applied one). */
  fresh(workspaceId: string): Promise<CurrentConfig>
  /** The workspace's configuration commits, at most `limit` (50 by default). */
  history(workspaceId: string, limit?: number): Promise<ConfigCommit[]>
}

export function createConfigService(deps: ConfigServiceDeps): ConfigService {
  const { stores, clock, activity } = deps
  const cacheMs = deps.cacheMs ?? 1000
  const cache = new Map<string, { value: CurrentConfig; readAt: number }>()

  async function readCurrent(workspaceId: string, from: Pick<Stores, 'config'> = stores): Promise<CurrentConfig> {
    const head = await from.config.head(workspaceId)
    return head
      ? { seq: head.seq, commitId: head.id, document: head.document, approvals: head.approvals }
      : { seq: 0, commitId: undefined, document: emptyConfig(), approvals: {} }
  }

  /** The configuration in force, cached for a short time (invalidated at once by local applies). */
  async function current(workspaceId: string): Promise<CurrentConfig> {
    const hit = cache.get(workspaceId)
    const now = clock.now()
    if (hit && now - hit.readAt < cacheMs) return hit.value
    const value = await readCurrent(workspaceId)
    cache.set(workspaceId, { value, readAt: now })
    return value
  }

  function invalidate(workspaceId: string): void {
    cache.delete(workspaceId)
  }

  /** Plans the physical table changes, refusing any that would lose stored rows. */
  async function planTables(tx: Stores, workspaceId: string, next: WorkspaceConfig): Promise<(() => Promise<void>)[]> {
    const existing = new Map((await tx.config.connectionTables(workspaceId)).map((t) => [t.lookup, t]))
    const steps: (() => Promise<void>)[] = []
    const problems: string[] = []
    const wanted = new Map(next.connections.map((c) => [c.lookup, c]))
    for (const [lookup, table] of existing) {
      if (wanted.has(lookup)) continue
      const rows = await tx.config.countRows(table)
      if (rows > 0) problems.push(`removing connection ${lookup} would delete its ${rows} stored rows`)
      else steps.push(() => tx.config.dropConnectionTable(table))
    }
    for (const connection of next.connections) {
      const table = existing.get(connection.lookup)
      if (!table) {
        steps.push(() => tx.config.createConnectionTable(tableFor(workspaceId, connection)))
        continue
      }
      const before = new Map(table.columns.map((c) => [c.name, c]))
      const after = new Map(connection.columns.map((c) => [c.name, c]))
      const removed = [...before.keys()].filter((name) => !after.has(name))
      const retyped = [...after.values()].filter((c) => before.has(c.name) && before.get(c.name)!.type !== c.type)
      const added = connection.columns.filter((c) => !before.has(c.name))
      if (removed.length || retyped.length) {
        const rows = await tx.config.countRows(table)
        if (rows > 0) {
          const what = [
            ...removed.map((n) => `remove column ${n}`),
            ...retyped.map((c) => `change column ${c.name} from ${before.get(c.name)!.type} to ${c.type}`),
          ]
          problems.push(`connection ${connection.lookup} has ${rows} stored rows; refusing to ${what.join(' and ')} (that would lose data)`)
          continue
        }
        steps.push(async () => {
          await tx.config.dropConnectionTable(table)
          await tx.config.createConnectionTable(tableFor(workspaceId, connection))
        })
      } else if (added.length) {
        steps.push(() => tx.config.addConnectionColumns({ ...table, columns: connection.columns }, added))
      }
    }
    if (problems.length) throw new InvalidInputError(`the configuration cannot be applied:\n  ${problems.join('\n  ')}`)
    return steps
  }

  function tableFor(workspaceId: string, connection: ConnectionConfig): ConnectionTable {
    return {
      workspaceId,
      lookup: connection.lookup,
      sqlName: connectionTableName(workspaceId, connection.lookup),
      columns: connection.columns,
    }
  }

  function approvalsFor(
    previous: CurrentConfig,
    next: WorkspaceConfig,
    changes: readonly ConfigChange[],
    actor: ConfigActor,
    at: number,
  ): Record<string, WarmQueryApproval> {
    const touched = new Set(changes.filter((c) => c.entity === 'warmQuery').map((c) => c.id))
    const approvals: Record<string, WarmQueryApproval> = {}
    for (const query of next.warmQueries) {
      approvals[query.lookup] =
        touched.has(query.lookup) || !previous.approvals[query.lookup]
          ? { accountId: actor.accountId, accountName: actor.accountName, at }
          : previous.approvals[query.lookup]!
    }
    return approvals
  }

  /**
   * Validates `document` and commits it. Throws InvalidInputError (with every problem and its path)
   * for a bad document or a data-losing table change, ForbiddenError when the actor may not apply
   * configuration or approve the warm queries it changes. Nothing is written unless all succeeds.
   */
  /**
   * The one path to a configuration commit, inside `tx`: takes the workspace's commit lock (so two
   * applies or acceptances never race for the same sequence number), diffs against the head,
   * refuses warm query changes by an actor who cannot approve them, plans and runs the table changes
   * and records the commit and its change row. Nothing is written for a dry run or an empty diff.
   */
  async function commitIn(
    tx: Stores,
    workspaceId: string,
    actor: ConfigActor,
    next: WorkspaceConfig,
    options: { message?: string; dryRun?: boolean; via?: Actor['via'] },
  ): Promise<ApplyResult> {
    await tx.config.lockHistory(workspaceId)
    const previous = await readCurrent(workspaceId, tx)
    const changes = diffConfig(previous.document, next)
    if (changes.some((c) => c.entity === 'warmQuery') && !roleHas(actor.role, 'warm-queries:approve')) {
      throw new ForbiddenError(
        `changing warm queries makes ${actor.accountName} their approver, and the ${actor.role} role cannot approve warm queries; ask an approver to apply it or file a proposal`,
      )
    }
    const steps = await planTables(tx, workspaceId, next)
    if (options.dryRun || changes.length === 0) return { changes, commit: undefined }
    for (const step of steps) await step()
    const at = clock.now()
    const seq = previous.seq + 1
    const commit: ConfigCommit = {
      id: commitId(workspaceId, seq, previous.commitId, next, actor.accountId, at),
      workspaceId,
      seq,
      parentId: previous.commitId,
      authorId: actor.accountId,
      authorName: actor.accountName,
      message: options.message?.trim().slice(0, 500) || describeChanges(changes).join('; ').slice(0, 500),
      createdAt: at,
      document: next,
      approvals: approvalsFor(previous, next, changes, actor, at),
      changes,
    }
    await tx.config.insertCommit(commit)
    await tx.changes.append({
      workspaceId,
      kind: 'config',
      entityType: 'config',
      entityId: commit.id,
      action: 'committed',
      actorId: actor.accountId,
      actorName: actor.accountName,
      at,
      commitId: commit.id,
      summary: `${changes.length} change${changes.length === 1 ? '' : 's'}: ${describeChanges(changes).join(', ')}`.slice(0, 1000),
    })
    await activity.recordDecision(
      {
        workspaceId,
        entityType: 'config',
        entityId: commit.id,
        actionType: 'applied',
        actor: { id: actor.accountId, name: actor.accountName, via: options.via ?? 'portal' },
        details: { seq, parentId: commit.parentId ?? null, message: commit.message, changes: describeChanges(changes).slice(0, 200) },
      },
      tx,
    )
    tx.afterCommit(() => invalidate(workspaceId))
    return { changes, commit }
  }

  /**
   * Validates `document` and commits it. Throws InvalidInputError (with every problem and its path)
   * for a bad document or a data-losing table change, ForbiddenError when the actor may not apply
   * configuration or approve the warm queries it changes. Nothing is written unless all succeeds.
   */
  async function apply(
    workspaceId: string,
    actor: ConfigActor,
    document: unknown,
    options: { message?: string; dryRun?: boolean; workspaceName?: string; via?: Actor['via'] } = {},
  ): Promise<ApplyResult> {
    if (!roleHas(actor.role, 'config:apply'))
      throw new ForbiddenError(`the ${actor.role} role cannot apply configuration; an editor, approver or admin can`)
    const next = validateConfig(document)
    if (next.workspace !== undefined && options.workspaceName !== undefined && next.workspace !== options.workspaceName) {
      throw new InvalidInputError(`workspace: the document is for workspace "${next.workspace}", not "${options.workspaceName}"`)
    }
    return stores.transaction((tx) => commitIn(tx, workspaceId, actor, next, options))
  }

  /**
   * Commits `document` inside the caller's transaction `tx` (issue 8: an accepted proposal commits
   * in the same transaction as its status change and its change row). The actor is the commit's
   * author and becomes the approver, at this time, of every warm query the commit adds or changes.
   */
  function commitInTransaction(
    tx: Stores,
    workspaceId: string,
    actor: ConfigActor,
    document: unknown,
    options: { message: string; via?: Actor['via'] },
  ): Promise<ApplyResult> {
    return commitIn(tx, workspaceId, actor, validateConfig(document), options)
  }

  return {
    current,
    invalidate,
    apply,
    commitInTransaction,
    currentIn: (tx: Pick<Stores, 'config'>, workspaceId: string) => readCurrent(workspaceId, tx),
    fresh: (workspaceId: string) => readCurrent(workspaceId),
    history: (workspaceId: string, limit = 50) => stores.config.listCommits(workspaceId, limit),
  }
}

function commitId(
  workspaceId: string,
  seq: number,
  parent: string | undefined,
  document: WorkspaceConfig,
  author: string,
  at: number,
): string {
  return createHash('sha256')
    .update(JSON.stringify([workspaceId, seq, parent ?? null, document, author, at]))
    .digest('hex')
    .slice(0, 12)
}
