/**
 * @module
 * The corrections log. A correction row is never deleted; its decision columns are set once, from
 * empty, when it is approved or rejected (the whole history is also in the activity log).
 */
import type { Migration } from './migration.js'

const sql = (bigint: string) => `
CREATE TABLE corrections (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  scope_key TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  chain_index INTEGER NOT NULL,
  previous_id TEXT,
  reason_category TEXT NOT NULL,
  reason TEXT NOT NULL,
  before_value TEXT NOT NULL,
  after_value TEXT NOT NULL,
  amended_by_id TEXT NOT NULL,
  amended_by_name TEXT NOT NULL,
  status TEXT NOT NULL,
  approval_required INTEGER NOT NULL,
  created_at ${bigint} NOT NULL,
  effective_at TEXT,
  decided_at ${bigint},
  decided_by_id TEXT,
  decided_by_name TEXT,
  decision_reason TEXT,
  decided_via TEXT,
  UNIQUE (workspace_id, scope_key, entity_type, entity_id, chain_index)
);
CREATE INDEX corrections_by_scope ON corrections (workspace_id, scope_key, created_at);
CREATE INDEX corrections_by_entity ON corrections (workspace_id, scope_key, entity_id);
`

export const corrections: Migration = {
  id: '0008-corrections',
  sqlite: sql('INTEGER'),
  postgres: sql('BIGINT'),
}
