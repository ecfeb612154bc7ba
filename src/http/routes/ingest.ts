/**
 * @module
 * Push ingest: `POST /oi-api/ingest/data-connections/{lookup}` (issue: KQL, item 6). A JSON array
 * of row objects or NDJSON (one object per line); all rows are stored or none.
 */
import { z } from 'zod'
import { InvalidInputError } from '../../domain/errors.js'
import type { IngestService } from '../../domain/ingest/index.js'
import { parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import { refuseNulCharacters } from '../wire/json-body.js'

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
        const body = request.body
        const rows = typeof body === 'string' ? parseNdjson(body) : body
        if (!Array.isArray(rows))
          throw new InvalidInputError('the body must be a JSON array of row objects (or NDJSON with Content-Type application/x-ndjson)')
        const result = await ingest.push(caller, params.lookup, rows)
        return { ...result, ingestedAt: new Date(result.ingestedAt).toISOString() }
      },
    }),
  ]
}
