/**
 * @module
 * Push ingest: `POST /oi-api/ingest/data-connections/{lookup}` (issue: KQL, item 6). A JSON array
 * of row objects or NDJSON (one object per line); all rows are stored or none. The body arrives
 * unparsed (`bodyBytes`): the ingest service reads the common body straight into typed rows and
 * falls back to `referenceRows` (the strict parser, as for every other route) for anything else.
 */
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.js'
import type { IngestService, UnreadPushBody } from '../../domain/ingest/index.js'
import { parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import { parseBodyOfKind, refuseNulCharacters, type UnparsedBody } from '../wire/json-body.js'

const rowObject = z
  .record(z.string(), z.unknown())
  .describe('Column name → value (datetime as ISO 8601 text, timespan as "hh:mm:ss", dynamic as any JSON)')

/** NDJSON: one JSON object per non-empty line; errors name the line. */
export function parseNdjson(text: string): unknown[] {
  const rows: unknown[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === '') continue
    try {
      // integers beyond 2^53 stay exact (bigint) for long columns
      const row = parseStrictJson(line, { exactIntegers: true })
      refuseNulCharacters(row, `line ${i + 1}`)
      rows.push(row)
    } catch (error) {
      if (error instanceof StrictJsonError) throw new InvalidInputError(`line ${i + 1} is not valid JSON: ${error.message}`)
      throw error
    }
  }
  return rows
}

/** The rows as the strict parsers give them, or the body's 400: the reference reading of a push body. */
function referenceRows(body: UnparsedBody | undefined): unknown[] {
  const parsed = body === undefined ? undefined : parseBodyOfKind(body.bytes, body.kind, { exactIntegers: true })
  const rows = typeof parsed === 'string' ? parseNdjson(parsed) : parsed
  if (!Array.isArray(rows))
    throw new InvalidInputError('the body must be a JSON array of row objects (or NDJSON with Content-Type application/x-ndjson)')
  return rows
}

/** A push body for the ingest service: read in one pass when it can be, else the reference way (memoised). */
function unreadPushBody(body: UnparsedBody): UnreadPushBody {
  let rows: unknown[] | undefined
  return {
    bytes: body.bytes,
    layout: body.kind === 'json' ? 'array' : 'lines',
    values: () => {
      rows ??= referenceRows(body)
      return rows
    },
  }
}

export function ingestRoutes(ingest: IngestService): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/ingest/data-connections/:lookup',
      operationId: 'ingestRows',
      summary: 'Push rows into a push data connection',
      description:
        "Each row is validated against the connection's declared columns; the whole batch is stored in one transaction or, when any row does not fit, not at all (the message names the row and column). Stored rows get a workspace-wide row id and their ingestion time, and are announced on the live stream.",
      tag: 'Ingest',
      rights: ['ingest:write'],
      params: z.object({ lookup: z.string().min(1).max(64) }),
      rawBody: {
        contentTypes: ['application/json', 'application/x-ndjson'],
        schema: z.array(rowObject),
        description: 'A JSON array of row objects, or NDJSON with one row object per line.',
      },
      bodyLimit: 32 * 1024 * 1024,
      exactIntegers: true,
      bodyBytes: true,
      responses: {
        200: {
          description: 'The batch was stored.',
          schema: z.object({
            connection: z.string(),
            rowCount: z.number().int(),
            firstRowId: z.number().int(),
            lastRowId: z.number().int(),
            ingestedAt: z.string(),
          }),
        },
      },
      handler: async ({ caller, params, request }) => {
        const raw = request.body as UnparsedBody | undefined
        const body = raw === undefined ? referenceRows(raw) : unreadPushBody(raw)
        let result: Awaited<ReturnType<IngestService['push']>>
        try {
          result = await ingest.push(caller, params.lookup, body)
        } catch (error) {
          // A body that does not parse is refused before the connection is looked at, as when
          // every body was parsed ahead of the handler.
          if (!Array.isArray(body)) body.values()
          throw error
        }
        return { ...result, ingestedAt: new Date(result.ingestedAt).toISOString() }
      },
    }),
  ]
}
