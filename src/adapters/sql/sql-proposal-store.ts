/**
 * @module
 * ProposalStore over portable SQL (both backends). The change set and its diff are JSON text.
 */
import type { Proposal, ProposalStatus, ProposalStore } from '../../domain/proposals/proposal-store.js'
import { type SqlDb, toNumber, toOptionalNumber, toOptionalText } from './sql-db.js'

type Row = Record<string, unknown>

const COLUMNS =
  'id, workspace_id, status, author_id, author_name, via, rationale, changes, diff, base_commit_id, base_seq, created_at, decided_at, decided_by_id, decided_by_name, decision_reason, commit_id'

const proposalOf = (r: Row): Proposal => ({
  id: String(r['id']),
  workspaceId: String(r['workspace_id']),
  status: String(r['status']) as ProposalStatus,
  author: { id: String(r['author_id']), name: String(r['author_name']) },
  via: String(r['via']) as Proposal['via'],
  rationale: String(r['rationale']),
  changes: JSON.parse(String(r['changes'])),
  diff: JSON.parse(String(r['diff'])),
  baseCommitId: toOptionalText(r['base_commit_id']),
  baseSeq: toNumber(r['base_seq']),
  createdAt: toNumber(r['created_at']),
  decidedAt: toOptionalNumber(r['decided_at']),
  decidedBy:
    r['decided_by_id'] === null || r['decided_by_id'] === undefined
      ? undefined
      : { id: String(r['decided_by_id']), name: String(r['decided_by_name']) },
  decisionReason: toOptionalText(r['decision_reason']),
  commitId: toOptionalText(r['commit_id']),
})

export function createSqlProposalStore(db: SqlDb): ProposalStore {
  return {
    async insert(p) {
      await db.run(`INSERT INTO proposals (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        p.id,
        p.workspaceId,
        p.status,
        p.author.id,
        p.author.name,
        p.via,
        p.rationale,
        JSON.stringify(p.changes),
        JSON.stringify(p.diff),
        p.baseCommitId ?? null,
        p.baseSeq,
        p.createdAt,
        p.decidedAt ?? null,
        p.decidedBy?.id ?? null,
        p.decidedBy?.name ?? null,
        p.decisionReason ?? null,
        p.commitId ?? null,
      ])
    },
    async byId(workspaceId, id) {
      const r = await db.get<Row>(`SELECT ${COLUMNS} FROM proposals WHERE workspace_id = ? AND id = ?`, [workspaceId, id])
      return r && proposalOf(r)
    },
    async list(workspaceId, filter) {
      const where = ['workspace_id = ?']
      const params: unknown[] = [workspaceId]
      if (filter.status !== undefined) {
        where.push('status = ?')
        params.push(filter.status)
      }
      if (filter.authorId !== undefined) {
        where.push('author_id = ?')
        params.push(filter.authorId)
      }
      params.push(filter.limit)
      const rows = await db.all<Row>(
        `SELECT ${COLUMNS} FROM proposals WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`,
        params,
      )
      return rows.map(proposalOf)
    },
    async decide(workspaceId, id, d) {
      const result = await db.run(
        `UPDATE proposals SET status = ?, decided_at = ?, decided_by_id = ?, decided_by_name = ?, decision_reason = ?
         WHERE workspace_id = ? AND id = ? AND status = 'open'`,
        [d.status, d.decidedAt, d.decidedBy.id, d.decidedBy.name, d.reason ?? null, workspaceId, id],
      )
      return result.changes === 1
    },
    async setCommit(workspaceId, id, commitId) {
      await db.run('UPDATE proposals SET commit_id = ? WHERE workspace_id = ? AND id = ?', [commitId, workspaceId, id])
    },
  }
}
