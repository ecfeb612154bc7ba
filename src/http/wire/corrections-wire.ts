/**
 * @module
 * Corrections on the wire (spec 2.8): field names as the spec spells them (`ScopeKey`,
 * `entityType`, `reasonCategory`, `amendedBy`, `status`), the rest camelCase; times ISO 8601.
 */
import { z } from 'zod'
import { CORRECTION_STATUSES, type Correction } from '../../domain/corrections/index.js'
import { InvalidInputError } from '../../domain/errors.js'
import { scopeKeySchema } from './activity-records.js'

export const correctionSchema = z.object({
  id: z.string(),
  ScopeKey: z.string(),
  entityType: z.string(),
  entityId: z.string(),
  reasonCategory: z.string(),
  reason: z.string(),
  before: z.unknown().describe('The values before the correction (for data rows: the corrected columns).'),
  after: z.unknown().describe('The values after the correction.'),
  amendedBy: z.string().describe('Name of the account that wrote the correction (server-set).'),
  amendedById: z.string(),
  status: z.enum(CORRECTION_STATUSES),
  approvalRequired: z.boolean(),
  createdAt: z.string(),
  effectiveAt: z.string().optional().describe('The time the corrected fact refers to, when given.'),
  chainIndex: z.number().int().describe("Position in the entity's correction chain (1 = first)."),
  previousId: z.string().optional().describe('The previous correction of the same entity in this scope.'),
  decidedAt: z.string().optional(),
  approvedBy: z.string().optional(),
  rejectedBy: z.string().optional(),
  rejectionReason: z.string().optional(),
  approvalComment: z.string().optional().describe("The approver's comment, when the approval gave one."),
  decidedVia: z.enum(['api', 'portal']).optional().describe('`portal` decisions are electronic signatures (password re-entered).'),
})

export type WireCorrection = z.infer<typeof correctionSchema>

export function toWireCorrection(c: Correction): WireCorrection {
  return {
    id: c.id,
    ScopeKey: c.scopeKey,
    entityType: c.entityType,
    entityId: c.entityId,
    reasonCategory: c.reasonCategory,
    reason: c.reason,
    before: c.before,
    after: c.after,
    amendedBy: c.amendedBy.name,
    amendedById: c.amendedBy.id,
    status: c.status,
    approvalRequired: c.approvalRequired,
    createdAt: new Date(c.createdAt).toISOString(),
    ...(c.effectiveAt ? { effectiveAt: c.effectiveAt } : {}),
    chainIndex: c.chainIndex,
    ...(c.previousId ? { previousId: c.previousId } : {}),
    ...(c.decidedAt !== undefined ? { decidedAt: new Date(c.decidedAt).toISOString() } : {}),
    ...(c.status === 'applied' && c.decidedBy ? { approvedBy: c.decidedBy.name } : {}),
    ...(c.status === 'rejected' && c.decidedBy ? { rejectedBy: c.decidedBy.name } : {}),
    ...(c.rejectionReason ? { rejectionReason: c.rejectionReason } : {}),
    ...(c.approvalComment ? { approvalComment: c.approvalComment } : {}),
    ...(c.decidedVia ? { decidedVia: c.decidedVia } : {}),
  }
}

const present = (name: string) => z.custom<unknown>((v) => v !== undefined, { message: `${name} is required (use null for "no value")` })

/** Fields the server sets; a body that tries to set them is refused. */
const SERVER_SET = [
  'id',
  'amendedBy',
  'amendedById',
  'status',
  'createdAt',
  'decidedAt',
  'approvedBy',
  'rejectedBy',
  'chainIndex',
  'previousId',
  'approvalRequired',
]

function serverSetMessage(keys: readonly string[]): string | undefined {
  const set = keys.filter((k) => SERVER_SET.some((s) => s.toLowerCase() === k.toLowerCase()))
  return set.length ? `${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set by the server and cannot be sent` : undefined
}

export function refuseServerSetFields(body: unknown): void {
  if (body === null || typeof body !== 'object') return
  const message = serverSetMessage(Object.keys(body))
  if (message) throw new InvalidInputError(message)
}

const CORRECTION_FIELDS = 'ScopeKey, entityType, entityId, reasonCategory, reason, before, after, effectiveAt'

/**
 * entityType and entityId name a correction chain (with the scope); control characters would make
 * two different entities one chain key, so they are refused like in a ScopeKey.
 */
const entityText = (name: string, description: string) =>
  z
    .string({ error: `${name} is required` })
    .max(1000, `${name} is at most 1000 characters`)
    .regex(/^[^\u0000-\u001f\u007f]*$/u, `${name} must not contain control characters`)
    .describe(description)

export const createCorrectionBody = z.strictObject(
  {
    ScopeKey: z.string({ error: 'ScopeKey is required' }).pipe(scopeKeySchema).describe('The scope the correction belongs to.'),
    entityType: entityText('entityType', 'What is corrected; `row:<connection lookup>` corrects a data row.'),
    entityId: entityText('entityId', 'Which one; for data rows, the row id.'),
    reasonCategory: z.string({ error: 'reasonCategory is required' }),
    reason: z.string({ error: 'reason is required' }),
    before: present('before'),
    after: present('after'),
    effectiveAt: z.string().optional(),
  },
  {
    // Unknown fields are refused, as for events and exports: a misspelt field must not pass silently.
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? (serverSetMessage(issue.keys) ??
          `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; a correction has ${CORRECTION_FIELDS}`)
        : undefined,
  },
)

/**
 * The 400 when a corrections call leaves `scopeKey` off (spec 4.6: required on every corrections
 * endpoint but reason-categories). It names the query string because approve and reject take a body
 * too, and callers who send `ScopeKey` there, as creating a correction does, must learn where it goes.
 */
export const SCOPE_KEY_REQUIRED = 'scopeKey is required on the query string (…?scopeKey=…): corrections are read and decided per scope'

/** `scopeKey` on a corrections query string: present and not empty. */
export const scopeKeyQuery = z.string({ error: SCOPE_KEY_REQUIRED }).min(1, SCOPE_KEY_REQUIRED)

export const listQuery = z.object({
  scopeKey: scopeKeyQuery,
  entityId: z.string().optional(),
  entityType: z.string().optional(),
  reasonCategory: z.string().optional(),
  amendedBy: z.string().optional(),
  status: z.enum(CORRECTION_STATUSES).optional(),
  startDate: z.iso.datetime({ offset: true, error: 'startDate must be an ISO 8601 time' }).optional(),
  endDate: z.iso.datetime({ offset: true, error: 'endDate must be an ISO 8601 time' }).optional(),
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(1000, 'limit may be at most 1000')
    .default(100),
  offset: z.coerce
    .number({ error: 'offset must be a number' })
    .int('offset must be a whole number')
    .min(0, 'offset may not be negative')
    .default(0),
})

export const listResponse = z.object({
  results: z.array(correctionSchema).describe('Newest first.'),
  totalCount: z.number().int().describe('Corrections matching the filters.'),
  limit: z.number().int(),
  offset: z.number().int(),
})

export const chainResponse = z.object({
  ScopeKey: z.string(),
  entityId: z.string(),
  results: z.array(correctionSchema),
})

/** An approval's body, both shapes (spec 4.6, 4.7): an optional comment. */
export const approveBody = z
  .strictObject(
    { comment: z.string().max(2000).optional() },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; an approval takes an optional comment`
          : undefined,
    },
  )
  .optional()

/** A rejection's body, both shapes: the reason is required. */
export const rejectBody = z.strictObject(
  { reason: z.string({ error: 'reason is required: say why the correction is rejected' }) },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; a rejection takes a reason`
        : undefined,
  },
)
