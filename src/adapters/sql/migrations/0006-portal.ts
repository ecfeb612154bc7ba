/**
 * @module
 * Portal sessions and the sign-in throttle. Sessions live in the database (not in process memory) so
 * a browser can be served by any API process sharing it, and signing out or disabling an account
 * holds everywhere at once.
 */
import type { Migration } from './migration.js'

const common = (bigint: string) => `
-- One row per signed-in browser. The cookie holds a random secret; only its SHA-256 is stored, so a
-- copy of this table cannot be replayed as cookies. password_stamp ties the session to the password
-- it was opened with: setting a new password ends every session of the account.
CREATE TABLE portal_sessions (
  id_hash TEXT PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  csrf_token TEXT NOT NULL,
  password_stamp TEXT NOT NULL,
  created_at ${bigint} NOT NULL,
  last_seen_at ${bigint} NOT NULL,
  expires_at ${bigint} NOT NULL,
  client_address TEXT NOT NULL,
  user_agent TEXT NOT NULL
);
CREATE INDEX portal_sessions_by_account ON portal_sessions (account_id);

-- Failed sign-ins, one row per failure and key (account:<name>, address:<ip>), kept for the
-- throttle window only.
CREATE TABLE portal_login_failures (
  key TEXT NOT NULL,
  at ${bigint} NOT NULL
);
CREATE INDEX portal_login_failures_by_key ON portal_login_failures (key, at);
`

export const portal: Migration = {
  id: '0006-portal',
  sqlite: common('INTEGER'),
  postgres: common('BIGINT'),
}
