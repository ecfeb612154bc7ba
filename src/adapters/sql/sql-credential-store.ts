/**
 * @module
 * CredentialStore over portable SQL (both backends). Sealed bytes are stored as base64 text.
 */
import type { CredentialStore, StoredCredential } from '../../domain/credentials/credential-store.js'
import { type SqlDb, toNumber } from './sql-db.js'

type Row = Record<string, unknown>

const COLUMNS = 'workspace_id, lookup, key_id, nonce, ciphertext, tag, key_names, updated_at, updated_by, updated_by_name'

const b64 = (b: Buffer) => b.toString('base64')
const bytes = (v: unknown) => Buffer.from(String(v), 'base64')

const recordOf = (r: Row): StoredCredential => ({
  workspaceId: String(r['workspace_id']),
  lookup: String(r['lookup']),
  sealed: { keyId: String(r['key_id']), nonce: bytes(r['nonce']), ciphertext: bytes(r['ciphertext']), tag: bytes(r['tag']) },
  keys: JSON.parse(String(r['key_names'])) as string[],
  updatedAt: toNumber(r['updated_at']),
  updatedById: String(r['updated_by']),
  updatedByName: String(r['updated_by_name']),
})

export function createSqlCredentialStore(db: SqlDb): CredentialStore {
  return {
    async get(workspaceId, lookup) {
      const r = await db.get<Row>(`SELECT ${COLUMNS} FROM connection_credentials WHERE workspace_id = ? AND lookup = ?`, [
        workspaceId,
        lookup,
      ])
      return r ? recordOf(r) : undefined
    },
    async put(c) {
      await db.run(
        `INSERT INTO connection_credentials (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (workspace_id, lookup) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
           tag = excluded.tag, key_names = excluded.key_names, updated_at = excluded.updated_at, updated_by = excluded.updated_by,
           updated_by_name = excluded.updated_by_name`,
        [
          c.workspaceId,
          c.lookup,
          c.sealed.keyId,
          b64(c.sealed.nonce),
          b64(c.sealed.ciphertext),
          b64(c.sealed.tag),
          JSON.stringify(c.keys),
          c.updatedAt,
          c.updatedById,
          c.updatedByName,
        ],
      )
    },
    async delete(workspaceId, lookup) {
      return (await db.run('DELETE FROM connection_credentials WHERE workspace_id = ? AND lookup = ?', [workspaceId, lookup])).changes > 0
    },
    async list(workspaceId) {
      const rows = await db.all<Row>(`SELECT ${COLUMNS} FROM connection_credentials WHERE workspace_id = ? ORDER BY lookup`, [workspaceId])
      return rows.map(recordOf)
    },
    async workspacesWithCredentials() {
      const rows = await db.all<Row>('SELECT DISTINCT workspace_id FROM connection_credentials ORDER BY workspace_id')
      return rows.map((r) => String(r['workspace_id']))
    },
    async reseal(workspaceId, lookup, expected, s) {
      const result = await db.run(
        'UPDATE connection_credentials SET key_id = ?, nonce = ?, ciphertext = ?, tag = ? WHERE workspace_id = ? AND lookup = ? AND key_id = ? AND nonce = ?',
        [s.keyId, b64(s.nonce), b64(s.ciphertext), b64(s.tag), workspaceId, lookup, expected.keyId, b64(expected.nonce)],
      )
      return result.changes > 0
    },
  }
}
