/**
 * @module
 * AccessStore over portable SQL (both backends).
 */
import type { AccessStore, Account, AuthRecord, Membership, TokenRecord } from '../../domain/access/access-store.js'
import type { Role } from '../../domain/access/rights.js'
import type { Workspace } from '../../domain/workspaces/workspace.js'
import { type SqlDb, toNumber, toOptionalNumber, toOptionalText } from './sql-db.js'

type Row = Record<string, unknown>

const workspaceOf = (r: Row): Workspace => ({ id: String(r['id']), name: String(r['name']), createdAt: toNumber(r['created_at']) })

const accountOf = (r: Row, prefix = ''): Account => ({
  id: String(r[`${prefix}id`]),
  name: String(r[`${prefix}name`]),
  displayName: String(r[`${prefix}display_name`]),
  disabled: toNumber(r[`${prefix}disabled`]) === 1,
  createdAt: toNumber(r[`${prefix}created_at`]),
})

const tokenOf = (r: Row): TokenRecord => ({
  id: String(r['id']),
  workspaceId: String(r['workspace_id']),
  accountId: String(r['account_id']),
  name: String(r['name']),
  rights: JSON.parse(String(r['rights'])),
  scopes: JSON.parse(String(r['scopes'])),
  createdAt: toNumber(r['created_at']),
  expiresAt: toNumber(r['expires_at']),
  createdBy: String(r['created_by']),
  revokedAt: toOptionalNumber(r['revoked_at']),
  revokedBy: toOptionalText(r['revoked_by']),
  lastUsedAt: toOptionalNumber(r['last_used_at']),
})

const TOKEN_COLUMNS =
  't.id, t.workspace_id, t.account_id, t.name, t.rights, t.scopes, t.created_at, t.expires_at, t.created_by, t.revoked_at, t.revoked_by, t.last_used_at'

/** Token, owner and membership in one read (authentication, and the stream guard's check). */
const AUTH_SELECT = `SELECT ${TOKEN_COLUMNS}, a.id AS a_id, a.name AS a_name, a.display_name AS a_display_name, a.disabled AS a_disabled,
                a.created_at AS a_created_at, m.role AS m_role
           FROM tokens t
           JOIN accounts a ON a.id = t.account_id
           LEFT JOIN memberships m ON m.workspace_id = t.workspace_id AND m.account_id = t.account_id`

const authRecordOf = (r: Row): AuthRecord => ({
  token: tokenOf(r),
  account: accountOf(r, 'a_'),
  role: (r['m_role'] ?? undefined) as Role | undefined,
})

export function createSqlAccessStore(db: SqlDb): AccessStore {
  return {
    async insertWorkspace(w) {
      await db.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', [w.id, w.name, w.createdAt])
    },
    async workspaceById(id) {
      const r = await db.get<Row>('SELECT id, name, created_at FROM workspaces WHERE id = ?', [id])
      return r && workspaceOf(r)
    },
    async workspaceByName(name) {
      const r = await db.get<Row>('SELECT id, name, created_at FROM workspaces WHERE name = ?', [name])
      return r && workspaceOf(r)
    },
    async listWorkspaces() {
      return (await db.all<Row>('SELECT id, name, created_at FROM workspaces ORDER BY name')).map(workspaceOf)
    },

    async insertAccount(a) {
      await db.run('INSERT INTO accounts (id, name, display_name, disabled, created_at) VALUES (?, ?, ?, ?, ?)', [
        a.id,
        a.name,
        a.displayName,
        a.disabled ? 1 : 0,
        a.createdAt,
      ])
    },
    async accountByName(name) {
      const r = await db.get<Row>('SELECT id, name, display_name, disabled, created_at FROM accounts WHERE name = ?', [name])
      return r && accountOf(r)
    },
    async accountById(id) {
      const r = await db.get<Row>('SELECT id, name, display_name, disabled, created_at FROM accounts WHERE id = ?', [id])
      return r && accountOf(r)
    },
    async listAccounts() {
      return (await db.all<Row>('SELECT id, name, display_name, disabled, created_at FROM accounts ORDER BY name')).map((r) => accountOf(r))
    },
    async setAccountDisabled(accountId, disabled) {
      await db.run('UPDATE accounts SET disabled = ? WHERE id = ?', [disabled ? 1 : 0, accountId])
    },
    async passwordHash(accountId) {
      const r = await db.get<Row>('SELECT password_hash FROM accounts WHERE id = ?', [accountId])
      return r?.['password_hash'] ? String(r['password_hash']) : undefined
    },
    async setPasswordHash(accountId, hash) {
      await db.run('UPDATE accounts SET password_hash = ? WHERE id = ?', [hash, accountId])
    },

    async setMembership(m) {
      await db.run(
        'INSERT INTO memberships (workspace_id, account_id, role) VALUES (?, ?, ?) ON CONFLICT (workspace_id, account_id) DO UPDATE SET role = excluded.role',
        [m.workspaceId, m.accountId, m.role],
      )
    },
    async membership(workspaceId, accountId) {
      const r = await db.get<Row>('SELECT role FROM memberships WHERE workspace_id = ? AND account_id = ?', [workspaceId, accountId])
      return r && { workspaceId, accountId, role: r['role'] as Role }
    },
    async listMemberships(workspaceId) {
      const rows = await db.all<Row>('SELECT account_id, role FROM memberships WHERE workspace_id = ?', [workspaceId])
      return rows.map((r): Membership => ({ workspaceId, accountId: String(r['account_id']), role: r['role'] as Role }))
    },

    async insertToken(t) {
      await db.run(
        'INSERT INTO tokens (id, workspace_id, account_id, name, rights, scopes, created_at, expires_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          t.id,
          t.workspaceId,
          t.accountId,
          t.name,
          JSON.stringify(t.rights),
          JSON.stringify(t.scopes),
          t.createdAt,
          t.expiresAt,
          t.createdBy,
        ],
      )
    },
    async tokenById(id) {
      const r = await db.get<Row>(`SELECT ${TOKEN_COLUMNS} FROM tokens t WHERE t.id = ?`, [id])
      return r && tokenOf(r)
    },
    async listTokens(workspaceId, accountId) {
      const rows =
        accountId === undefined
          ? await db.all<Row>(`SELECT ${TOKEN_COLUMNS} FROM tokens t WHERE t.workspace_id = ? ORDER BY t.created_at DESC`, [workspaceId])
          : await db.all<Row>(
              `SELECT ${TOKEN_COLUMNS} FROM tokens t WHERE t.workspace_id = ? AND t.account_id = ? ORDER BY t.created_at DESC`,
              [workspaceId, accountId],
            )
      return rows.map(tokenOf)
    },
    async revokeToken(id, by, at) {
      const { changes } = await db.run('UPDATE tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL', [at, by, id])
      return changes === 1
    },
    async touchToken(id, at) {
      await db.run('UPDATE tokens SET last_used_at = ? WHERE id = ?', [at, id])
    },
    async authRecord(tokenId): Promise<AuthRecord | undefined> {
      const r = await db.get<Row>(`${AUTH_SELECT} WHERE t.id = ?`, [tokenId])
      return r && authRecordOf(r)
    },
    async authRecords(tokenIds) {
      const out = new Map<string, AuthRecord>()
      // Bounded IN lists: SQLite allows 32,766 parameters, PostgreSQL 65,535; 500 keeps statements small.
      for (let i = 0; i < tokenIds.length; i += 500) {
        const ids = tokenIds.slice(i, i + 500)
        const rows = await db.all<Row>(`${AUTH_SELECT} WHERE t.id IN (${ids.map(() => '?').join(', ')})`, ids)
        for (const r of rows) {
          const record = authRecordOf(r)
          out.set(record.token.id, record)
        }
      }
      return out
    },
  }
}
