/**
 * @module
 * Warm queries (spec 4.1): run a saved, approved query by lookup or API path, or ad-hoc KQL. A
 * client that disconnects before the answer cancels its query on the server (issue 15).
 */
import { z } from 'zod'
import type { QueryService } from '../../domain/queries/index.js'
import { abortOnDisconnect } from '../client-disconnect.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'

const KQL_TYPES = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid', 'dynamic'] as const

const queryResponse = z.object({
  lookup: z.string().optional().describe('The warm query run (absent for ad-hoc queries).'),
  results: z
    .array(z.record(z.string(), z.unknown()))
    .describe('Result rows keyed by column name. Datetimes are ISO 8601 UTC, timespans [d.]hh:mm:ss[.fffffff], dynamic values JSON.'),
  columns: z.array(z.object({ name: z.string(), type: z.enum(KQL_TYPES) })).describe('Result columns in order, with their KQL types.'),
  rowCount: z.number().int().describe('Rows in `results`.'),
  truncated: z.boolean().describe("True when the result had more rows than the workspace's row cap (settings.queries.rowCap)."),
  approvedBy: z.string().describe('Who approved the query; for ad-hoc queries, the caller.'),
  approvedAt: z.string().describe('When it was approved (ISO 8601); for ad-hoc queries, the run time.'),
  visualization: z
    .object({ kind: z.string(), properties: z.record(z.string(), z.unknown()) })
    .optional()
    .describe('The `render` hint, when the query has one.'),
})

export function warmQueryRoutes(queries: QueryService): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/warm-queries/*',
      openapiPath: '/warm-queries/{lookup}',
      operationId: 'runWarmQuery',
      summary: 'Run a warm query by its lookup or API path',
      description:
        "Runs a saved, approved query. `{lookup}` is the warm query's lookup or its API path, which may contain slashes (e.g. `plant/line-1/hourly-temp`). The response carries the result rows with the approver and approval time. 404 for an unknown lookup; 400 for a warm query without saved text, a KQL error, or a run that passes the time cap.",
      tag: 'Warm queries',
      rights: ['warm-queries:read'],
      params: z.object({ '*': z.string().min(1, "give the warm query's lookup or API path").max(700) }),
      responses: { 200: { description: 'The result rows, approver and approval time.', schema: queryResponse } },
      handler: async ({ caller, params, reply }) => queries.runWarm(caller, params['*'], { signal: abortOnDisconnect(reply) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/warm-queries',
      operationId: 'runAdhocQuery',
      summary: 'Run an ad-hoc KQL query',
      description:
        'Runs KQL without saving it. The caller is reported as the approver and the run time as the approval time. KQL errors are 400s naming the line and column; a query past a size, depth, time or memory limit is a 400 naming the limit. 503 when the query capacity is busy (every worker taken and the queue full): retry. Closing the connection cancels the query.',
      tag: 'Warm queries',
      rights: ['queries:run'],
      body: z.object({
        Query: z
          .string({ error: 'Query is required: the KQL text to run' })
          .describe('KQL text (case-insensitive property name: `query` works too).'),
      }),
      responses: { 200: { description: 'The result rows, with the caller as approver.', schema: queryResponse } },
      handler: async ({ caller, body, reply }) => queries.runAdhoc(caller, body.Query, { signal: abortOnDisconnect(reply) }),
    }),
  ]
}
