/**
 * @module
 * Connection credentials (issue 6 item 1, design §11): one row per connection holding its values
 * sealed with AES-256-GCM (nonce, ciphertext and tag as base64 text, the master key's id in clear).
 * The master key itself is never in the database.
 */
import type { Migration } from './migration.js'

const common = (bigint: string) => `
CREATE TABLE connection_credentials (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  lookup TEXT NOT NULL,
  key_id TEXT NOT NULL,
  nonce TEXT NOT NULL,
  ciphertext TEXT NOT NULL,
  tag TEXT NOT NULL,
  key_names TEXT NOT NULL,
  updated_at ${bigint} NOT NULL,
  updated_by TEXT NOT NULL,
  updated_by_name TEXT NOT NULL,
  PRIMARY KEY (workspace_id, lookup)
);
CREATE INDEX connection_credentials_by_key ON connection_credentials (key_id);
`

export const credentialsMigration: Migration = {
  id: '0004-credentials',
  sqlite: common('INTEGER'),
  postgres: common('BIGINT'),
}
