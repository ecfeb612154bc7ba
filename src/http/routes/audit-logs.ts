/**
 * @module
 * Activity log, earlier per-log shape (spec 4.7, audit-logs rows; design §5): a second view of the
 * same containers as the current shape, deprecated. `{lookup}` is the scope key; `actor` = userId,
 * `action` = actionType; events are listed newest first; verify answers `{ isValid, recordCount,
 * brokenAt, reason }`.
 */
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.js'
import type { EdgeLedger } from '../../domain/ledger/index.js'
import type { ApiServices } from '../../domain/services.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import {
  dateRange,
  exportFileName,
  filterText,
  legacyRecord,
  legacyRecordSchema,
  legacyVerdictSchema,
  pagingQuery,
  recordIdSchema,
  scopeKeySchema,
} from '../wire/activity-records.js'
import { eventBody, eventFields, optionalText } from './activity-log.js'

const DEPRECATED =
  'Deprecated: the earlier per-log shape (spec 4.7); use the /oi-api/provenance/events operations, where the scope is a filter. Both views show the same logs.'

const lookupParams = z.object({ lookup: scopeKeySchema.describe('The log: the scope key.') })

export function auditLogRoutes(services: ApiServices): AnyRoute[] {
  const ledger: EdgeLedger = services.ledger
  return [
    defineRoute({
      method: 'POST',
      path: '/audit-logs/:lookup/events',
      operationId: 'appendAuditLogEvent',
      summary: 'Append an event to a log (earlier per-log shape)',
      description: `${DEPRECATED} Appends to the log \`{lookup}\` (= ScopeKey) and returns the stored event. The actor and the timestamp are the server's; a body that sends them, a RecordID or a digest is a 400. A \`ScopeKey\` in the body, if sent, must equal \`{lookup}\`.`,
      tag: 'Activity log (per-log shape)',
      deprecated: true,
      rights: ['provenance:append'],
      params: lookupParams,
      body: eventBody({
        ScopeKey: scopeKeySchema.optional().describe('Optional; must equal {lookup}.'),
        ...eventFields,
        action: optionalText('action').describe(
          'The per-log name of `actionType` (spec 2.6, 4.7); either may be sent, both only with the same value.',
        ),
      }),
      responses: { 200: { description: 'The stored event.', schema: legacyRecordSchema } },
      commitsCallWithEvent: true,
      handler: async ({ caller, params, body, callRecord }) => {
        if (body.ScopeKey !== undefined && body.ScopeKey !== params.lookup)
          throw new InvalidInputError(`the body's ScopeKey "${body.ScopeKey}" differs from the log "${params.lookup}" in the path`)
        const { action, ...fields } = body
        if (action != null && fields.actionType != null && action !== fields.actionType)
          throw new InvalidInputError(
            `action "${action}" and actionType "${fields.actionType}" differ; they are two names of one field, send one of them`,
          )
        const actionType = fields.actionType ?? action
        const { ScopeKey: _sameAsLookup, ...event } = fields
        const appended = ledger.append(
          caller,
          { ...event, ...(actionType !== undefined ? { actionType } : {}), scopeKey: params.lookup },
          callRecord,
        )
        return legacyRecord(await appended)
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/audit-logs/:lookup/events/query',
      operationId: 'queryAuditLogEvents',
      summary: "Query a log's events (earlier per-log shape)",
      description: `${DEPRECATED} Events of the log \`{lookup}\`, newest first, filtered by \`actor\` (= userId) and \`action\` (= actionType) and by time (\`startDate\` inclusive, \`endDate\` exclusive; a date alone includes that whole day). \`limit\` defaults to 100 (at most 1000).`,
      tag: 'Activity log (per-log shape)',
      deprecated: true,
      rights: ['provenance:read'],
      params: lookupParams,
      query: z.object({
        actor: filterText('actor').optional().describe('= userId.'),
        action: filterText('action').optional().describe('= actionType.'),
        ...pagingQuery,
      }),
      responses: {
        200: {
          description: 'One page of events, newest first, and the total count.',
          schema: z.object({
            lookup: z.string(),
            totalCount: z.number().int(),
            limit: z.number().int(),
            offset: z.number().int(),
            results: z.array(legacyRecordSchema),
          }),
        },
      },
      handler: async ({ caller, params, query }) => {
        const { records, total } = await ledger.query(caller, {
          scopeKey: params.lookup,
          filter: {
            ...(query.actor !== undefined ? { userId: query.actor } : {}),
            ...(query.action !== undefined ? { actionType: query.action } : {}),
            ...dateRange(query.startDate, query.endDate),
          },
          page: { limit: query.limit, offset: query.offset, order: 'desc' },
        })
        return { lookup: params.lookup, totalCount: total, limit: query.limit, offset: query.offset, results: records.map(legacyRecord) }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/audit-logs/:lookup/events/verify',
      operationId: 'verifyAuditLog',
      summary: "Verify a log's integrity chain (earlier per-log shape)",
      description: `${DEPRECATED} The same whole-chain verification as POST /oi-api/provenance/events/verify, answered as \`{ isValid, recordCount, brokenAt, reason }\`. An optional body may carry \`RecordID\` (12 digits; then isValid also requires that record to verify) and \`TrustedCheckpoint\`.`,
      tag: 'Activity log (per-log shape)',
      deprecated: true,
      rights: ['provenance:verify'],
      params: lookupParams,
      body: z
        .strictObject(
          {
            RecordID: recordIdSchema.nullable().optional(),
            TrustedCheckpoint: filterText('TrustedCheckpoint', 10_000).nullable().optional(),
          },
          {
            error: (issue) =>
              issue.code === 'unrecognized_keys'
                ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; verify takes RecordID and TrustedCheckpoint`
                : undefined,
          },
        )
        .optional(),
      responses: {
        200: { description: 'The verdict.', schema: legacyVerdictSchema },
        404: { description: 'A well-formed RecordID past the end of the chain.' },
      },
      handler: async ({ caller, params, body }) => {
        const { verdict, recordsRead } = await ledger.verify(caller, {
          scopeKey: params.lookup,
          recordId: body?.RecordID,
          trustedCheckpoint: body?.TrustedCheckpoint ?? null,
        })
        return {
          isValid: verdict.ChainValid && verdict.Valid !== false,
          recordCount: recordsRead,
          brokenAt: verdict.BrokenAt,
          reason: verdict.Reason,
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/audit-logs/:lookup/events/export',
      operationId: 'exportAuditLog',
      summary: 'Export a log as JSON or CSV (earlier per-log shape)',
      description: `${DEPRECATED} The same export as GET /oi-api/provenance/events/export?scopeKey={lookup}.`,
      tag: 'Activity log (per-log shape)',
      deprecated: true,
      rights: ['provenance:read'],
      params: lookupParams,
      query: z.object({
        format: z.enum(['json', 'csv'], { error: 'format is json or csv' }).default('json'),
        startDate: pagingQuery.startDate,
        endDate: pagingQuery.endDate,
      }),
      responses: { 200: { description: 'The export, streamed.', contentType: 'application/json' } },
      handler: async ({ caller, params, query, reply }) => {
        const range = dateRange(query.startDate, query.endDate)
        const filter: Record<string, string> = { format: query.format, lookup: params.lookup }
        if (query.startDate !== undefined) filter['startDate'] = query.startDate
        if (query.endDate !== undefined) filter['endDate'] = query.endDate
        const { contentType, stream } = await ledger.exportLog(caller, {
          scopeKey: params.lookup,
          format: query.format,
          ...range,
          filter,
        })
        reply
          .type(contentType)
          .header('content-disposition', `attachment; filename="${exportFileName(params.lookup, query.format, services.clock.now())}"`)
        return reply.send(stream)
      },
    }),
  ]
}
