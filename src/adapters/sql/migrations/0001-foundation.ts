/**
 * @module
 * Workspaces, accounts, roles, tokens, configuration commits, connection tables and the outbox of
 * committed workspace changes. Times are milliseconds since the epoch (BIGINT) in both dialects.
 */
import type { Migration } from './migration.js'

const common = (bigint: string, json: string) => `
CREATE TABLE server_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- Public halves of the token signing keys of every process sharing this database: a token signed by
-- any of them verifies everywhere. Private keys never enter the database.
CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  public_key TEXT NOT NULL,
  created_at ${bigint} NOT NULL,
  retired_at ${bigint}
);

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at ${bigint} NOT NULL
);

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  password_hash TEXT,
  created_at ${bigint} NOT NULL
);

CREATE TABLE memberships (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  account_id TEXT NOT NULL REFERENCES accounts(id),
  role TEXT NOT NULL,
  PRIMARY KEY (workspace_id, account_id)
);

CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  account_id TEXT NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  rights ${json} NOT NULL,
  scopes ${json} NOT NULL,
  created_at ${bigint} NOT NULL,
  expires_at ${bigint} NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at ${bigint},
  revoked_by TEXT,
  last_used_at ${bigint}
);
CREATE INDEX tokens_by_owner ON tokens (workspace_id, account_id);

CREATE TABLE config_commits (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  parent_id TEXT,
  author_id TEXT NOT NULL,
  author_name TEXT NOT NULL,
  message TEXT NOT NULL,
  created_at ${bigint} NOT NULL,
  document ${json} NOT NULL,
  approvals ${json} NOT NULL,
  changes ${json} NOT NULL,
  PRIMARY KEY (workspace_id, seq),
  UNIQUE (workspace_id, id)
);

CREATE TABLE connection_tables (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  lookup TEXT NOT NULL,
  sql_name TEXT NOT NULL UNIQUE,
  columns ${json} NOT NULL,
  PRIMARY KEY (workspace_id, lookup)
);

CREATE TABLE workspace_counters (
  workspace_id TEXT NOT NULL,
  name TEXT NOT NULL,
  value ${bigint} NOT NULL,
  PRIMARY KEY (workspace_id, name)
);

CREATE TABLE workspace_changes (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  seq ${bigint} NOT NULL,
  kind TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  action TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  actor_name TEXT NOT NULL,
  at ${bigint} NOT NULL,
  commit_id TEXT,
  summary TEXT NOT NULL,
  PRIMARY KEY (workspace_id, seq)
);
`

// JSON documents are stored as text in both dialects: PostgreSQL jsonb would reorder keys.
export const foundation: Migration = {
  id: '0001-foundation',
  sqlite: common('INTEGER', 'TEXT'),
  postgres: common('BIGINT', 'TEXT'),
}
