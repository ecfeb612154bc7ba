/**
 * @module
 * CorrectionStore over portable SQL.
 */
import type { Correction, CorrectionStatus, CorrectionStore } from '../../domain/corrections/correction.js'
import { reserveCounter } from './sql-change-store.js'
import { type SqlDb, toNumber, toOptionalNumber } from './sql-db.js'

type Row = Record<string, unknown>

const COLUMNS = `id, workspace_id, scope_key, entity_type, entity_id, chain_index, previous_id, reason_category, reason, before_value, after_value,
  amended_by_id, amended_by_name, status, approval_required, created_at, effective_at, decided_at, decided_by_id, decided_by_name, decision_reason, decided_via`

const optional = (value: unknown): string | undefined => (value === null || value === undefined ? undefined : String(value))

function correctionOf(r: Row): Correction {
  const status = r['status'] as CorrectionStatus
  return {
    id: String(r['id']),
    workspaceId: String(r['workspace_id']),
    scopeKey: String(r['scope_key']),
    entityType: String(r['entity_type']),
    entityId: String(r['entity_id']),
    chainIndex: toNumber(r['chain_index']),
    previousId: optional(r['previous_id']),
    reasonCategory: String(r['reason_category']),
    reason: String(r['reason']),
    before: JSON.parse(String(r['before_value'])),
    after: JSON.parse(String(r['after_value'])),
    amendedBy: { id: String(r['amended_by_id']), name: String(r['amended_by_name']) },
    status,
    approvalRequired: toNumber(r['approval_required']) === 1,
    createdAt: toNumber(r['created_at']),
    effectiveAt: optional(r['effective_at']),
    decidedAt: toOptionalNumber(r['decided_at']),
    decidedBy: r['decided_by_id'] ? { id: String(r['decided_by_id']), name: String(r['decided_by_name']) } : undefined,
    rejectionReason: status === 'rejected' ? optional(r['decision_reason']) : undefined,
    approvalComment: status === 'applied' ? optional(r['decision_reason']) : undefined,
    decidedVia: optional(r['decided_via']) as Correction['decidedVia'],
  }
}

export function createSqlCorrectionStore(db: SqlDb): CorrectionStore {
  return {
    async insert(c) {
      await db.run(`INSERT INTO corrections (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        c.id,
        c.workspaceId,
        c.scopeKey,
        c.entityType,
        c.entityId,
        c.chainIndex,
        c.previousId ?? null,
        c.reasonCategory,
        c.reason,
        JSON.stringify(c.before),
        JSON.stringify(c.after),
        c.amendedBy.id,
        c.amendedBy.name,
        c.status,
        c.approvalRequired ? 1 : 0,
        c.createdAt,
        c.effectiveAt ?? null,
        c.decidedAt ?? null,
        c.decidedBy?.id ?? null,
        c.decidedBy?.name ?? null,
        c.rejectionReason ?? null,
        c.decidedVia ?? null,
      ])
    },
    async byId(workspaceId, id) {
      const r = await db.get<Row>(`SELECT ${COLUMNS} FROM corrections WHERE workspace_id = ? AND id = ?`, [workspaceId, id])
      return r && correctionOf(r)
    },
    async latestOf(workspaceId, scopeKey, entityType, entityId) {
      const r = await db.get<Row>(
        `SELECT ${COLUMNS} FROM corrections WHERE workspace_id = ? AND scope_key = ? AND entity_type = ? AND entity_id = ? ORDER BY chain_index DESC LIMIT 1`,
        [workspaceId, scopeKey, entityType, entityId],
      )
      return r && correctionOf(r)
    },
    async firstScopeOf(workspaceId, entityType, entityId) {
      const r = await db.get<{ scope_key: string }>(
        'SELECT scope_key FROM corrections WHERE workspace_id = ? AND entity_type = ? AND entity_id = ? ORDER BY created_at, chain_index LIMIT 1',
        [workspaceId, entityType, entityId],
      )
      return r?.scope_key
    },
    async chainOf(workspaceId, scopeKey, entityType, entityId) {
      const rows = await db.all<Row>(
        `SELECT ${COLUMNS} FROM corrections WHERE workspace_id = ? AND scope_key = ? AND entity_type = ? AND entity_id = ? ORDER BY chain_index`,
        [workspaceId, scopeKey, entityType, entityId],
      )
      return rows.map(correctionOf)
    },
    async decide(workspaceId, id, d) {
      const { changes } = await db.run(
        `UPDATE corrections SET status = ?, decided_at = ?, decided_by_id = ?, decided_by_name = ?, decision_reason = ?, decided_via = ?
          WHERE workspace_id = ? AND id = ? AND status = 'pending'`,
        [d.status, d.at, d.by.id, d.by.name, d.reason ?? null, d.via, workspaceId, id],
      )
      return changes === 1
    },
    async query(f) {
      const where = ['workspace_id = ?']
      const params: unknown[] = [f.workspaceId]
      const add = (clause: string, ...values: unknown[]) => {
        where.push(clause)
        params.push(...values)
      }
      if (f.scopeKey !== undefined) add('scope_key = ?', f.scopeKey)
      if (f.entityId !== undefined) add('entity_id = ?', f.entityId)
      if (f.entityType !== undefined) add('entity_type = ?', f.entityType)
      if (f.reasonCategory !== undefined) add('reason_category = ?', f.reasonCategory)
      if (f.amendedBy !== undefined) add('(amended_by_name = ? OR amended_by_id = ?)', f.amendedBy, f.amendedBy)
      if (f.status !== undefined) add('status = ?', f.status)
      if (f.from !== undefined) add('created_at >= ?', f.from)
      if (f.to !== undefined) add('created_at < ?', f.to)
      if (f.rowConnections !== undefined) {
        const types = f.rowConnections.map((lookup) => `row:${lookup}`)
        add(
          types.length === 0
            ? "substr(entity_type, 1, 4) <> 'row:'"
            : `(substr(entity_type, 1, 4) <> 'row:' OR entity_type IN (${types.map(() => '?').join(', ')}))`,
          ...types,
        )
      }
      const condition = where.join(' AND ')
      const total = toNumber((await db.get<Row>(`SELECT COUNT(*) AS n FROM corrections WHERE ${condition}`, params))?.['n'] ?? 0)
      const rows = await db.all<Row>(
        `SELECT ${COLUMNS} FROM corrections WHERE ${condition} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
        [...params, f.limit, f.offset],
      )
      return { items: rows.map(correctionOf), total }
    },
    nextChainIndex(workspaceId, scopeKey, entityType, entityId) {
      return reserveCounter(db, workspaceId, `correction-chain\n${scopeKey}\n${entityType}\n${entityId}`)
    },
  }
}
