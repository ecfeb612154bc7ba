/**
 * @module
 * Cold-data export (spec 2.4, 2.5, 4.2, 8; design §5): three POST operations that write one page
 * of a time window to a file and answer with its download URL, and the download itself:
 * `GET /oi-api/downloads/files/<file id>?expires=<ms>&signature=<HMAC>`, outside bearer
 * authentication (the signature is the authorisation), with Range support. The download route is
 * registered beside the /oi-api context, not in it, and logs its path only: the signature must
 * never reach a log line.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import {
  DOWNLOAD_PATH_PREFIX,
  EXPORT_FORMATS,
  EXPORT_ROW_CAP,
  type ExportService,
  type ExportTarget,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  parseIsoTime,
} from '../../domain/exports/index.js'
import { sendError } from '../error-envelope.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import { byteRange } from '../wire/byte-range.js'

const FIELDS = 'format, from, to, page, pageSize'

const isoTime = (field: 'from' | 'to', description: string) =>
  z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `${field} is required: an ISO 8601 time, e.g. 2026-01-01T00:00:00Z`
          : `${field} must be an ISO 8601 time string`,
    })
    .transform((text, ctx) => {
      const ticks = parseIsoTime(text)
      if (typeof ticks === 'string') {
        ctx.addIssue({ code: 'custom', message: `${field} "${text.length > 40 ? `${text.slice(0, 40)}…` : text}" ${ticks}` })
        return z.NEVER
      }
      return ticks
    })
    .describe(description)

const pageSizeError = `pageSize must be a whole number from 1 to ${PAGE_SIZE_MAX} (default ${PAGE_SIZE_DEFAULT})`

export const exportRequestBody = z
  .strictObject(
    {
      format: z
        .enum(EXPORT_FORMATS, { error: 'format must be "csv" or "jsonl"' })
        .describe('File format: `csv` (RFC 4180, header row, CRLF) or `jsonl` (one JSON object per line).'),
      from: isoTime(
        'from',
        'Start of the window, inclusive: ISO 8601 (`2026-01-01T00:00:00Z`, an offset such as `+02:00`, or a date; without a zone, UTC).',
      ),
      to: isoTime('to', 'End of the window, exclusive: ISO 8601, later than `from`.'),
      page: z
        .number({ error: 'page must be a whole number from 1 (default 1)' })
        .int({ error: 'page must be a whole number from 1 (default 1)' })
        .min(1, { error: 'page must be a whole number from 1 (default 1)' })
        .default(1)
        .describe('1-based page of the capped set; a page past the end gives an empty file.'),
      pageSize: z
        .number({ error: pageSizeError })
        .int({ error: pageSizeError })
        .min(1, { error: pageSizeError })
        .max(PAGE_SIZE_MAX, {
          error: `pageSize is at most ${PAGE_SIZE_MAX}; ask for the following rows with page (default ${PAGE_SIZE_DEFAULT})`,
        })
        .default(PAGE_SIZE_DEFAULT)
        .describe(`Rows per page, 1 to ${PAGE_SIZE_MAX} (default ${PAGE_SIZE_DEFAULT}).`),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}; the fields are ${FIELDS}`
          : undefined,
    },
  )
  .superRefine((body, ctx) => {
    if (body.from >= body.to)
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be later than from (the window is [from, to))' })
  })

const exportResponse = z.object({
  downloadUrl: z
    .string()
    .describe(
      'Where to download the file, without a bearer token, until `expiresAt`; Range requests resume a download. Any change to it makes it invalid (403).',
    ),
  expiresAt: z.string().describe('When the download URL expires (ISO 8601): 15 minutes after issue.'),
  format: z.enum(EXPORT_FORMATS),
  page: z.number().int().describe('The page this file holds (1-based).'),
  pageSize: z.number().int(),
  pageCount: z.number().int().describe('Pages of the capped set: ceil(totalRows / pageSize).'),
  rowCount: z.number().int().describe('Rows in this file.'),
  totalRows: z.number().int().describe(`Rows in the capped set: the window's rows, at most ${EXPORT_ROW_CAP}.`),
  truncated: z.boolean().describe(`True when the window held more than ${EXPORT_ROW_CAP} rows; narrow the window to export the rest.`),
})

const lookup = z.string().min(1).max(64)

const COMMON = `Writes page \`page\` of the rows in the window [\`from\`, \`to\`) to a CSV or JSONL file and answers with its download URL, which works without a bearer token for 15 minutes. Rows are ordered by timestamp, then row id, and capped at ${EXPORT_ROW_CAP} (\`truncated\` when the window held more). Corrected rows export their corrected values. In CSV, text cells starting with =, +, -, @, tab or CR get a leading apostrophe (formula-injection guard); numbers are left as they are.`

export function exportRoutes(exports: ExportService): AnyRoute[] {
  const route = <P>(
    operationId: string,
    path: string,
    summary: string,
    description: string,
    params: z.ZodType<P>,
    target: (p: P) => ExportTarget,
  ) =>
    defineRoute({
      method: 'POST',
      path,
      operationId,
      summary,
      description: `${description} ${COMMON}`,
      tag: 'Cold-data export',
      rights: ['exports:create'],
      params,
      body: exportRequestBody,
      responses: { 200: { description: 'The file is written; download it from `downloadUrl`.', schema: exportResponse } },
      handler: async ({ caller, params: p, body }) => {
        const result = await exports.create(caller, target(p), body)
        return {
          downloadUrl: result.downloadUrl,
          expiresAt: new Date(result.expiresAt).toISOString(),
          format: result.format,
          page: result.page,
          pageSize: result.pageSize,
          pageCount: result.pageCount,
          rowCount: result.rowCount,
          totalRows: result.totalRows,
          truncated: result.truncated,
        }
      },
    })
  return [
    route(
      'exportDataConnection',
      '/downloads/data-connections/:lookup',
      "Export a data connection's rows in a time window",
      "The columns are the connection's declared columns.",
      z.object({ lookup }),
      (p: { lookup: string }) => ({ kind: 'data-connection', connection: p.lookup }),
    ),
    route(
      'exportSurface',
      '/downloads/surfaces/:surface',
      "Export the rows of a surface's connections in a time window",
      "Rows of every connection of the surface the token may read, merged; a `connection` column (first) names each row's connection, followed by the union of the connections' columns (empty where a connection lacks one).",
      z.object({ surface: lookup }),
      (p: { surface: string }) => ({ kind: 'surface', surface: p.surface }),
    ),
    route(
      'exportSurfaceConnection',
      '/downloads/surfaces/:surface/connection/:connection',
      'Export one connection of a surface in a time window',
      'The connection must belong to the surface (404 otherwise). Like a surface export restricted to one connection: a `connection` column, then its columns.',
      z.object({ surface: lookup, connection: lookup }),
      (p: { surface: string; connection: string }) => ({ kind: 'surface-connection', surface: p.surface, connection: p.connection }),
    ),
  ]
}

function pathOnly(request: FastifyRequest): string {
  return request.url.split('?')[0]!
}

/** The download route (no bearer token: the URL's signature authorises it). */
export function registerDownloadRoute(app: FastifyInstance, exports: ExportService): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: `${DOWNLOAD_PATH_PREFIX}:fileId`,
    // Fastify's automatic HEAD route would read the whole file; this handler answers HEAD itself.
    exposeHeadRoute: false,
    // Whatever logger the process has, this route's request lines carry the path only.
    logSerializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: pathOnly(request), id: request.id, remoteAddress: request.ip }),
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'private, no-store').header('x-content-type-options', 'nosniff')
      const { fileId } = request.params as { fileId: string }
      const query = request.query as Record<string, unknown>
      const download = await exports.openDownload(fileId, query['expires'], query['signature'])
      const size = download.file.sizeBytes
      const headers = { 'accept-ranges': 'bytes', etag: download.etag }
      const header = (name: string) => {
        const v = request.headers[name]
        return typeof v === 'string' ? v : undefined
      }
      const range = byteRange(header('range'), header('if-range'), download.etag, size)
      if (range.kind === 'unsatisfiable') {
        await download.file.close()
        reply.headers({ ...headers, 'content-range': `bytes */${size}` })
        return sendError(reply, 416, `the requested range is outside the file, which has ${size} bytes`)
      }
      reply.headers({
        ...headers,
        'content-type': download.contentType,
        'content-disposition': `attachment; filename="${download.fileName}"`,
      })
      if (range.kind === 'partial')
        reply
          .code(206)
          .headers({ 'content-range': `bytes ${range.start}-${range.end}/${size}`, 'content-length': range.end - range.start + 1 })
      else reply.header('content-length', size)
      // HEAD: the same headers, no body.
      if (request.method === 'HEAD') {
        await download.file.close()
        return reply.send()
      }
      return reply.send(download.file.stream(range.kind === 'partial' ? range : undefined))
    },
  })
}
