/**
 * @module
 * What configuration as code needs from persistence: the commit history and the physical tables of
 * connections. Implemented in src/adapters/sql/ for SQLite and PostgreSQL.
 */
import type { ConfigChange } from './config-diff.js'
import type { ColumnConfig, WorkspaceConfig } from './config-document.js'

/** Who approved a warm query and when (spec 2.1: returned with every run). */
export interface WarmQueryApproval {
  readonly accountId: string
  readonly accountName: string
  readonly at: number
}

export interface ConfigCommit {
  /** Short content-derived id, like a git commit id. */
  readonly id: string
  readonly workspaceId: string
  /** 1, 2, 3 … per workspace. */
  readonly seq: number
  readonly parentId: string | undefined
  readonly authorId: string
  readonly authorName: string
  readonly message: string
  readonly createdAt: number
  /** The whole configuration after this commit (defaults filled in). */
  readonly document: WorkspaceConfig
  /** Approval of every warm query in `document`, by lookup. */
  readonly approvals: Readonly<Record<string, WarmQueryApproval>>
  readonly changes: readonly ConfigChange[]
}

/** The physical table that holds one connection's rows. */
export interface ConnectionTable {
  readonly workspaceId: string
  readonly lookup: string
  /** Physical table name: derived from ids only, never from user text. */
  readonly sqlName: string
  /** Declared columns as the table has them now. */
  readonly columns: readonly ColumnConfig[]
}

export interface ConfigStore {
  head(workspaceId: string): Promise<ConfigCommit | undefined>
  /** Newest first. */
  listCommits(workspaceId: string, limit: number): Promise<ConfigCommit[]>
  commitById(workspaceId: string, id: string): Promise<ConfigCommit | undefined>
  /** Serialises configuration commits of one workspace until the transaction ends (a row lock). */
  lockHistory(workspaceId: string): Promise<void>
  /** MUST fail when a commit with the same (workspace, seq) exists: two applies never both win. */
  insertCommit(commit: ConfigCommit): Promise<void>

  connectionTables(workspaceId: string): Promise<ConnectionTable[]>
  createConnectionTable(table: ConnectionTable): Promise<void>
  addConnectionColumns(table: ConnectionTable, added: readonly ColumnConfig[]): Promise<void>
  dropConnectionTable(table: ConnectionTable): Promise<void>
  countRows(table: ConnectionTable): Promise<number>
}
