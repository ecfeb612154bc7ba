/**
 * @module
 * Corrections log, earlier per-log shape (spec 4.7, amendment-logs rows): a second view of the same
 * corrections where `{lookup}` is the scope key. Deprecated in favour of spec 4.6; the chain here
 * is newest first.
 */
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.js'
import type { ApiServices } from '../../domain/services.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import { scopeKeySchema } from '../wire/activity-records.js'
import {
  approveBody,
  chainResponse,
  correctionSchema,
  createCorrectionBody,
  listQuery,
  listResponse,
  refuseServerSetFields,
  rejectBody,
  toWireCorrection,
} from '../wire/corrections-wire.js'
import { listFilter, reasonCategoriesOf, reasonCategoriesResponse } from './corrections.js'

// The log's lookup is its ScopeKey: the same rules (1–200 characters, no control characters).
const lookupParams = z.object({ lookup: scopeKeySchema })
const lookupIdParams = lookupParams.extend({ id: z.string().min(1).max(100) })
const DEPRECATION = 'Deprecated: the earlier per-log shape; use /oi-api/provenance/amendments (spec 4.6), where scope is a filter.'

export function legacyAmendmentLogRoutes(services: ApiServices): AnyRoute[] {
  const corrections = services.corrections
  const common = { tag: 'Corrections (earlier per-log shape)', deprecated: true } as const
  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/amendment-logs/:lookup/amendments',
      operationId: 'legacyCreateCorrection',
      summary: 'Create a correction in the log {lookup}',
      description: `${DEPRECATION} The log's lookup is the scope key.`,
      rights: ['amendments:create'],
      params: lookupParams,
      body: createCorrectionBody.extend({ ScopeKey: z.string().optional() }),
      responses: { 200: { description: 'The correction as stored.', schema: correctionSchema } },
      handler: async ({ caller, params, body, request }) => {
        refuseServerSetFields(request.body)
        if (body.ScopeKey !== undefined && body.ScopeKey !== params.lookup)
          throw new InvalidInputError(`ScopeKey "${body.ScopeKey}" differs from the log "${params.lookup}" in the path`)
        return toWireCorrection(
          await corrections.create(caller, { ...body, scopeKey: params.lookup, before: body.before as never, after: body.after as never }),
        )
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/amendment-logs/:lookup/amendments/query',
      operationId: 'legacyQueryCorrections',
      summary: 'Query the corrections of the log {lookup}',
      description: DEPRECATION,
      rights: ['amendments:read'],
      params: lookupParams,
      query: listQuery.omit({ scopeKey: true }),
      responses: { 200: { description: 'A page of corrections, newest first.', schema: listResponse } },
      handler: async ({ caller, params, query }) => {
        const { items, total } = await corrections.list(caller, listFilter({ ...query, scopeKey: params.lookup }))
        return { results: items.map(toWireCorrection), totalCount: total, limit: query.limit, offset: query.offset }
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/amendment-logs/:lookup/chain',
      operationId: 'legacyCorrectionChain',
      summary: 'The correction chain of one entity, newest first',
      description: DEPRECATION,
      rights: ['amendments:read'],
      params: lookupParams,
      query: z.object({
        entityId: z.string({ error: 'entityId is required' }).min(1, 'entityId is required'),
        entityType: z.string().optional(),
      }),
      responses: { 200: { description: 'The chain, newest first.', schema: chainResponse } },
      handler: async ({ caller, params, query }) => ({
        ScopeKey: params.lookup,
        entityId: query.entityId,
        results: (await corrections.chain(caller, params.lookup, query.entityId, query.entityType)).reverse().map(toWireCorrection),
      }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/amendment-logs/:lookup/reason-categories',
      operationId: 'legacyReasonCategories',
      summary: 'The configurable reason categories',
      description: `${DEPRECATION} The list is workspace-wide; the lookup does not narrow it.`,
      rights: ['amendments:read'],
      params: lookupParams,
      responses: { 200: { description: 'The reason categories.', schema: reasonCategoriesResponse } },
      handler: async ({ caller }) => reasonCategoriesOf(services, caller.workspaceId),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/amendment-logs/:lookup/amendments/:id/approve',
      operationId: 'legacyApproveCorrection',
      summary: 'Approve a pending correction',
      description: DEPRECATION,
      rights: ['amendments:approve'],
      params: lookupIdParams,
      body: approveBody,
      responses: { 200: { description: 'The approved correction.', schema: correctionSchema } },
      handler: async ({ caller, params, body }) =>
        toWireCorrection(await corrections.approve(caller, params.lookup, params.id, body?.comment ? { comment: body.comment } : {})),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/amendment-logs/:lookup/amendments/:id/reject',
      operationId: 'legacyRejectCorrection',
      summary: 'Reject a pending correction with a reason',
      description: DEPRECATION,
      rights: ['amendments:approve'],
      params: lookupIdParams,
      body: rejectBody,
      responses: { 200: { description: 'The rejected correction.', schema: correctionSchema } },
      handler: async ({ caller, params, body }) =>
        toWireCorrection(await corrections.reject(caller, params.lookup, params.id, body.reason)),
    }),
  ]
}
