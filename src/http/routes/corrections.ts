/**
 * @module
 * Corrections log, current shape (spec 4.6): scope is a filter (`scopeKey` on the query string,
 * `ScopeKey` in bodies), required everywhere but on reason-categories.
 */
import { z } from 'zod'
import type { CorrectionsService } from '../../domain/corrections/index.js'
import type { ApiServices } from '../../domain/services.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import {
  approveBody,
  chainResponse,
  correctionSchema,
  createCorrectionBody,
  listQuery,
  listResponse,
  refuseServerSetFields,
  rejectBody,
  scopeKeyQuery,
  toWireCorrection,
} from '../wire/corrections-wire.js'

const reasonCategory = z.object({ id: z.string(), description: z.string().optional() })
export const reasonCategoriesResponse = z.object({ reasonCategories: z.array(reasonCategory) })

const scopeQuery = z.object({ scopeKey: scopeKeyQuery })
const idParams = z.object({ id: z.string().min(1).max(100) })

export function listFilter(query: z.infer<typeof listQuery>) {
  return {
    scopeKey: query.scopeKey,
    ...(query.entityId !== undefined ? { entityId: query.entityId } : {}),
    ...(query.entityType !== undefined ? { entityType: query.entityType } : {}),
    ...(query.reasonCategory !== undefined ? { reasonCategory: query.reasonCategory } : {}),
    ...(query.amendedBy !== undefined ? { amendedBy: query.amendedBy } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.startDate !== undefined ? { from: Date.parse(query.startDate) } : {}),
    ...(query.endDate !== undefined ? { to: Date.parse(query.endDate) } : {}),
    limit: query.limit,
    offset: query.offset,
  }
}

export async function reasonCategoriesOf(services: ApiServices, workspaceId: string) {
  const { document } = await services.config.current(workspaceId)
  return {
    reasonCategories: document.reasonCategories.map((c) => ({ id: c.id, ...(c.description ? { description: c.description } : {}) })),
  }
}

export function correctionRoutes(services: ApiServices): AnyRoute[] {
  const corrections: CorrectionsService = services.corrections
  return [
    defineRoute({
      method: 'POST',
      path: '/provenance/amendments',
      operationId: 'createCorrection',
      summary: 'Create a correction (pending or applied)',
      description:
        "Documents a correction with a reason category from the workspace list, a reason, and the values before and after. It is `pending` when the workspace requires approval for it, else `applied` at once. `amendedBy`, `status` and the dates are set by the server. For `entityType` `row:<connection lookup>` and `entityId` a row id, `before` must match the row's current values of the corrected columns, and applying the correction changes what queries and exports return; the original stays in the chain and the activity log.",
      tag: 'Corrections',
      rights: ['amendments:create'],
      body: createCorrectionBody,
      responses: { 200: { description: 'The correction as stored.', schema: correctionSchema } },
      handler: async ({ caller, body, request }) => {
        refuseServerSetFields(request.body)
        return toWireCorrection(
          await corrections.create(caller, { ...body, scopeKey: body.ScopeKey, before: body.before as never, after: body.after as never }),
        )
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/amendments',
      operationId: 'listCorrections',
      summary: 'Query corrections of a scope',
      description:
        'Filters: entityId, entityType, reasonCategory, amendedBy (account name or id), status, startDate/endDate (creation time, [start, end)), limit (default 100, at most 1000) and offset. Newest first, with the total count.',
      tag: 'Corrections',
      rights: ['amendments:read'],
      query: listQuery,
      responses: { 200: { description: 'A page of corrections.', schema: listResponse } },
      handler: async ({ caller, query }) => {
        const { items, total } = await corrections.list(caller, listFilter(query))
        return { results: items.map(toWireCorrection), totalCount: total, limit: query.limit, offset: query.offset }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/amendments/chain',
      operationId: 'getCorrectionChain',
      summary: 'The full correction chain of one entity, oldest first',
      description:
        'Every correction of the entity in the scope, ordered by chain link (oldest first), not by timestamp. Optional entityType narrows to one entity type.',
      tag: 'Corrections',
      rights: ['amendments:read'],
      query: z.object({
        entityId: z.string({ error: 'entityId is required' }).min(1, 'entityId is required'),
        scopeKey: scopeQuery.shape.scopeKey,
        entityType: z.string().optional(),
      }),
      responses: { 200: { description: 'The chain.', schema: chainResponse } },
      handler: async ({ caller, query }) => ({
        ScopeKey: query.scopeKey,
        entityId: query.entityId,
        results: (await corrections.chain(caller, query.scopeKey, query.entityId, query.entityType)).map(toWireCorrection),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/amendments/:id',
      operationId: 'getCorrection',
      summary: 'One correction',
      tag: 'Corrections',
      rights: ['amendments:read'],
      params: idParams,
      query: scopeQuery,
      responses: { 200: { description: 'The correction.', schema: correctionSchema } },
      handler: async ({ caller, params, query }) => toWireCorrection(await corrections.get(caller, query.scopeKey, params.id)),
    }),
    defineRoute({
      method: 'POST',
      path: '/provenance/amendments/:id/approve',
      operationId: 'approveCorrection',
      summary: 'Approve a pending correction (it is applied)',
      description:
        'Moves a pending correction to `applied`. `scopeKey` goes on the query string (`…/approve?scopeKey=…`), not in the body. With two-person approval on, the approver must be a different person than the author (403 otherwise). A correction that is not pending is a 400; an id of another scope is a 404.',
      tag: 'Corrections',
      rights: ['amendments:approve'],
      params: idParams,
      query: scopeQuery,
      body: approveBody,
      responses: { 200: { description: 'The approved (applied) correction.', schema: correctionSchema } },
      handler: async ({ caller, params, query, body }) =>
        toWireCorrection(await corrections.approve(caller, query.scopeKey, params.id, body?.comment ? { comment: body.comment } : {})),
    }),
    defineRoute({
      method: 'POST',
      path: '/provenance/amendments/:id/reject',
      operationId: 'rejectCorrection',
      summary: 'Reject a pending correction with a reason',
      description:
        'Moves a pending correction to `rejected`; `scopeKey` goes on the query string (`…/reject?scopeKey=…`) and the body must give a `reason`. The entity keeps its values.',
      tag: 'Corrections',
      rights: ['amendments:approve'],
      params: idParams,
      query: scopeQuery,
      body: rejectBody,
      responses: { 200: { description: 'The rejected correction.', schema: correctionSchema } },
      handler: async ({ caller, params, query, body }) =>
        toWireCorrection(await corrections.reject(caller, query.scopeKey, params.id, body.reason)),
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/reason-categories',
      operationId: 'listReasonCategories',
      summary: 'The workspace-wide list of correction reason categories',
      description: 'The configurable list of reasons a correction may give (spec 2.9). Workspace-wide and unscoped: it takes no scopeKey.',
      tag: 'Corrections',
      rights: ['amendments:read'],
      responses: { 200: { description: 'The reason categories, in configured order.', schema: reasonCategoriesResponse } },
      handler: async ({ caller }) => reasonCategoriesOf(services, caller.workspaceId),
    }),
  ]
}
