/**
 * @module
 * Pull connectors' status (issue 6, item 2): one row per (workspace, connection) of kind postgres or
 * mqtt, written by the process that runs the connector. `cursor` is the connector's resume point
 * (JSON text); it is written in the same transaction as the rows it covers, which is what makes
 * ingest exactly-once across restarts.
 */
import type { Migration } from './migration.js'

const common = (bigint: string) => `
CREATE TABLE connector_status (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  lookup TEXT NOT NULL,
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  last_run_at ${bigint},
  last_success_at ${bigint},
  last_error TEXT,
  last_error_at ${bigint},
  rows_ingested ${bigint} NOT NULL DEFAULT 0,
  rows_rejected ${bigint} NOT NULL DEFAULT 0,
  cursor TEXT,
  updated_at ${bigint} NOT NULL,
  PRIMARY KEY (workspace_id, lookup)
);
`

export const connectors: Migration = {
  id: '0007-connectors',
  sqlite: common('INTEGER'),
  postgres: common('BIGINT'),
}
