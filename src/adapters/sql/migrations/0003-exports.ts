/**
 * @module
 * Export files (issue 7): one row per file written for a cold-data export, so every process can
 * serve a download (the row names the file and its download name) and the sweeper can find what
 * expired. The row is committed with the export's decision record once the file is complete, and
 * deleted with the file.
 */
import type { Migration } from './migration.js'

const common = (bigint: string) => `
CREATE TABLE export_files (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  account_id TEXT NOT NULL,
  storage TEXT NOT NULL,
  object_key TEXT NOT NULL,
  format TEXT NOT NULL,
  file_name TEXT NOT NULL,
  size_bytes ${bigint} NOT NULL DEFAULT 0,
  sha256 TEXT NOT NULL DEFAULT '',
  created_at ${bigint} NOT NULL,
  expires_at ${bigint} NOT NULL,
  completed_at ${bigint}
);
CREATE INDEX export_files_by_expiry ON export_files (expires_at);
`

export const exportsMigration: Migration = {
  id: '0003-exports',
  sqlite: common('INTEGER'),
  postgres: common('BIGINT'),
}
