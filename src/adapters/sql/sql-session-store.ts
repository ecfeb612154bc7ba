/**
 * @module
 * SessionStore over portable SQL (both backends): portal sessions and sign-in failures.
 */
import type { Role } from '../../domain/access/rights.js'
import type { SessionLookup, SessionRecord, SessionStore, WorkspaceMembership } from '../../domain/sessions/session-store.js'
import { type SqlDb, toNumber } from './sql-db.js'

type Row = Record<string, unknown>

const SESSION_COLUMNS =
  's.id_hash, s.public_id, s.account_id, s.workspace_id, s.csrf_token, s.password_stamp, s.created_at, s.last_seen_at, s.expires_at, s.client_address, s.user_agent'

const sessionOf = (r: Row): SessionRecord => ({
  idHash: String(r['id_hash']),
  publicId: String(r['public_id']),
  accountId: String(r['account_id']),
  workspaceId: String(r['workspace_id']),
  csrfToken: String(r['csrf_token']),
  passwordStamp: String(r['password_stamp']),
  createdAt: toNumber(r['created_at']),
  lastSeenAt: toNumber(r['last_seen_at']),
  expiresAt: toNumber(r['expires_at']),
  clientAddress: String(r['client_address']),
  userAgent: String(r['user_agent']),
})

export function createSqlSessionStore(db: SqlDb): SessionStore {
  return {
    async insertSession(s) {
      await db.run(
        `INSERT INTO portal_sessions (id_hash, public_id, account_id, workspace_id, csrf_token, password_stamp, created_at, last_seen_at, expires_at, client_address, user_agent)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          s.idHash,
          s.publicId,
          s.accountId,
          s.workspaceId,
          s.csrfToken,
          s.passwordStamp,
          s.createdAt,
          s.lastSeenAt,
          s.expiresAt,
          s.clientAddress,
          s.userAgent,
        ],
      )
    },
    async lookupSession(idHash): Promise<SessionLookup | undefined> {
      const r = await db.get<Row>(
        `SELECT ${SESSION_COLUMNS},
                a.name AS a_name, a.display_name AS a_display_name, a.disabled AS a_disabled, a.created_at AS a_created_at, a.password_hash AS a_password_hash,
                w.name AS w_name, w.created_at AS w_created_at, m.role AS m_role
           FROM portal_sessions s
           JOIN accounts a ON a.id = s.account_id
           JOIN workspaces w ON w.id = s.workspace_id
           LEFT JOIN memberships m ON m.workspace_id = s.workspace_id AND m.account_id = s.account_id
          WHERE s.id_hash = ?`,
        [idHash],
      )
      if (!r) return undefined
      const session = sessionOf(r)
      return {
        session,
        account: {
          id: session.accountId,
          name: String(r['a_name']),
          displayName: String(r['a_display_name']),
          disabled: toNumber(r['a_disabled']) === 1,
          createdAt: toNumber(r['a_created_at']),
        },
        passwordHash: r['a_password_hash'] ? String(r['a_password_hash']) : undefined,
        workspace: { id: session.workspaceId, name: String(r['w_name']), createdAt: toNumber(r['w_created_at']) },
        role: (r['m_role'] ?? undefined) as Role | undefined,
      }
    },
    async touchSession(idHash, at) {
      await db.run('UPDATE portal_sessions SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at < ?', [at, idHash, at])
    },
    async setSessionWorkspace(idHash, workspaceId) {
      await db.run('UPDATE portal_sessions SET workspace_id = ? WHERE id_hash = ?', [workspaceId, idHash])
    },
    async deleteSession(idHash) {
      return (await db.run('DELETE FROM portal_sessions WHERE id_hash = ?', [idHash])).changes > 0
    },
    async deleteSessionsOf(accountId) {
      return (await db.run('DELETE FROM portal_sessions WHERE account_id = ?', [accountId])).changes
    },
    async deleteStaleSessions(now, idleSince) {
      await db.run('DELETE FROM portal_sessions WHERE expires_at <= ? OR last_seen_at <= ?', [now, idleSince])
    },
    async membershipsOf(accountId): Promise<WorkspaceMembership[]> {
      const rows = await db.all<Row>(
        `SELECT w.id, w.name, w.created_at, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.account_id = ? ORDER BY w.name`,
        [accountId],
      )
      return rows.map((r) => ({
        workspace: { id: String(r['id']), name: String(r['name']), createdAt: toNumber(r['created_at']) },
        role: r['role'] as Role,
      }))
    },

    async recordLoginFailure(keys, at) {
      for (const key of keys) await db.run('INSERT INTO portal_login_failures (key, at) VALUES (?, ?)', [key, at])
    },
    async loginFailures(keys, since) {
      const out = new Map<string, { count: number; oldest: number }>()
      if (keys.length === 0) return out
      const rows = await db.all<Row>(
        `SELECT key, COUNT(*) AS n, MIN(at) AS oldest FROM portal_login_failures WHERE key IN (${keys.map(() => '?').join(', ')}) AND at >= ? GROUP BY key`,
        [...keys, since],
      )
      for (const r of rows) out.set(String(r['key']), { count: toNumber(r['n']), oldest: toNumber(r['oldest']) })
      return out
    },
    async clearLoginFailures(key) {
      await db.run('DELETE FROM portal_login_failures WHERE key = ?', [key])
    },
    async pruneLoginFailures(before) {
      await db.run('DELETE FROM portal_login_failures WHERE at < ?', [before])
    },
  }
}
