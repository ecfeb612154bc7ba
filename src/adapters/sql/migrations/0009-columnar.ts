/**
 * @module
 * The columnar tier's catalog (docs/design/columnar.md): one manifest row per Parquet segment, the
 * compaction watermark per connection table, and the row ids changed in place after they were
 * compacted (corrections), which queries read from the row store instead of the segments.
 */
import type { Migration } from './migration.js'

const sql = (bigint: string) => `
CREATE TABLE columnar_segments (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  sql_name TEXT NOT NULL,
  file_name TEXT NOT NULL,
  row_count ${bigint} NOT NULL,
  min_rowid ${bigint} NOT NULL,
  max_rowid ${bigint} NOT NULL,
  min_timestamp ${bigint},
  max_timestamp ${bigint},
  columns TEXT NOT NULL,
  created_at ${bigint} NOT NULL
);
CREATE INDEX columnar_segments_by_table ON columnar_segments (sql_name, min_rowid);
CREATE TABLE columnar_watermarks (
  sql_name TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  last_rowid ${bigint} NOT NULL,
  updated_at ${bigint} NOT NULL
);
CREATE TABLE columnar_overlay (
  sql_name TEXT NOT NULL,
  rowid ${bigint} NOT NULL,
  PRIMARY KEY (sql_name, rowid)
);
`

export const columnar: Migration = {
  id: '0009-columnar',
  sqlite: sql('INTEGER'),
  postgres: sql('BIGINT'),
}
