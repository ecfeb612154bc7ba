/**
 * @module
 * The activity log's tables (design §8, docs/design/ledger.md): records, one head row per
 * container, the Merkle nodes that serve proofs, and copies of the signed checkpoints.
 *
 * Hashed fields are stored exactly as hashed: the canonical body and the timestamp as TEXT (never
 * jsonb/timestamptz, which re-render), digests as raw bytes. The uniqueness rules that keep forks
 * out of normal writes (one record per RecordID, one child per record) are named unique indexes,
 * not the primary key: verify still checks both, because someone with database access can drop an
 * index, and the tamper tests do exactly that.
 */
import type { Migration } from './migration.js'

const tables = (d: { id: string; bytes: string; recordIdCheck: string }) => `
CREATE TABLE ledger_records (
  id ${d.id},
  workspace_id TEXT NOT NULL,
  container_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  record_id TEXT NOT NULL,
  prev_digest ${d.bytes} NOT NULL,
  ts TEXT NOT NULL,
  user_id TEXT NOT NULL,
  body TEXT NOT NULL,
  digest ${d.bytes} NOT NULL,
  -- Copies of body fields for filtering and look-ups only; never hashed, never shown (the body is).
  entity_type TEXT,
  entity_id TEXT,
  action_type TEXT,
  CONSTRAINT ledger_records_record_id CHECK (${d.recordIdCheck})
);
CREATE UNIQUE INDEX ledger_records_seq ON ledger_records (workspace_id, container_id, seq);
CREATE UNIQUE INDEX ledger_records_prev ON ledger_records (workspace_id, container_id, prev_digest);
-- Finds the heads-log entries that name a container; only the heads log needs it, so only its rows pay for it.
CREATE INDEX ledger_records_heads ON ledger_records (workspace_id, entity_id, seq) WHERE container_id = 'heads';

-- The store's own claim of each container's tip, updated in the transaction of every append. It
-- also holds the Merkle compact range (so a checkpoint costs O(log n)) and the newest checkpointed size.
CREATE TABLE ledger_heads (
  workspace_id TEXT NOT NULL,
  container_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  digest ${d.bytes} NOT NULL,
  last_ts TEXT,
  range_peaks ${d.bytes} NOT NULL,
  checkpoint_size BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, container_id)
);

-- Perfect Merkle subtrees at levels 4, 8, 12, … (level 0 is the record digests); the levels between
-- are recomputed from at most 16 stored hashes when a proof needs them.
CREATE TABLE ledger_nodes (
  workspace_id TEXT NOT NULL,
  container_id TEXT NOT NULL,
  level INTEGER NOT NULL,
  idx BIGINT NOT NULL,
  hash ${d.bytes} NOT NULL,
  PRIMARY KEY (workspace_id, container_id, level, idx)
);

-- Signed checkpoint notes as issued: a convenience copy (the copies that count are the ones auditors
-- keep). Several notes for one size are kept, so contradicting checkpoints stay visible.
CREATE TABLE ledger_checkpoints (
  id ${d.id},
  workspace_id TEXT NOT NULL,
  container_id TEXT NOT NULL,
  size BIGINT NOT NULL,
  issued_at BIGINT NOT NULL,
  note TEXT NOT NULL
);
CREATE INDEX ledger_checkpoints_size ON ledger_checkpoints (workspace_id, container_id, size);
`

export const ledger: Migration = {
  id: '0002-ledger',
  sqlite: tables({ id: 'INTEGER PRIMARY KEY', bytes: 'BLOB', recordIdCheck: "record_id = substr('000000000000' || seq, -12, 12)" }),
  postgres: tables({ id: 'BIGSERIAL PRIMARY KEY', bytes: 'BYTEA', recordIdCheck: "record_id = lpad(seq::text, 12, '0')" }),
}
