/**
 * @module
 * Proposals (issue 8): uncommitted change sets to the workspace configuration, filed through MCP
 * (later the portal) and accepted or rejected in the portal only. The change set and its diff are
 * JSON text; times are milliseconds since the epoch.
 */
import type { Migration } from './migration.js'

const common = (bigint: string, json: string) => `
CREATE TABLE proposals (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  status TEXT NOT NULL,
  author_id TEXT NOT NULL,
  author_name TEXT NOT NULL,
  via TEXT NOT NULL,
  rationale TEXT NOT NULL,
  changes ${json} NOT NULL,
  diff ${json} NOT NULL,
  base_commit_id TEXT,
  base_seq INTEGER NOT NULL,
  created_at ${bigint} NOT NULL,
  decided_at ${bigint},
  decided_by_id TEXT,
  decided_by_name TEXT,
  decision_reason TEXT,
  commit_id TEXT
);
CREATE INDEX proposals_by_workspace ON proposals (workspace_id, status, created_at);
`

export const proposals: Migration = {
  id: '0005-proposals',
  sqlite: common('INTEGER', 'TEXT'),
  postgres: common('BIGINT', 'TEXT'),
}
