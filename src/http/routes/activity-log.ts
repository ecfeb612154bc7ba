/**
 * @module
 * Activity log, current shape (spec 4.5; scope as a filter): append, query, verify, export, plus
 * the latest signed checkpoint and RFC 9162 proofs, so auditors need not poll the costly
 * whole-chain verify (design §8). The earlier per-log shape is audit-logs.ts.
 */
import { z } from 'zod'
import type { EdgeLedger } from '../../domain/ledger/index.js'
import type { ApiServices } from '../../domain/services.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import {
  currentRecord,
  dateRange,
  exportFileName,
  filterText,
  hex,
  pagingQuery,
  recordIdSchema,
  recordSchema,
  scopeKeySchema,
  verdictSchema,
  wholeNumber,
} from '../wire/activity-records.js'

const EVENT_FIELDS = 'ScopeKey, entityType, entityId, actionType, details'

export const optionalText = (name: string) =>
  z
    .string({ error: `${name} must be a string` })
    .max(1000, `${name} is at most 1000 characters`)
    .refine((v) => !v.includes('\u0000'), `${name} may not contain the NUL character (\\u0000)`)
    .nullable()
    .optional()

/** The fields of an event body besides ScopeKey (shared with the per-log shape). */
export const eventFields = {
  entityType: optionalText('entityType').describe('What the event is about, e.g. `batch`.'),
  entityId: optionalText('entityId').describe('Which one, e.g. `B-1001`.'),
  actionType: optionalText('actionType').describe('What happened, e.g. `release`.'),
  details: z
    .record(z.string(), z.unknown(), { error: 'details must be a JSON object' })
    .nullable()
    .optional()
    .describe('Any JSON object; stored and hashed in canonical form (RFC 8785).'),
}

/**
 * An event body: its declared fields are checked here, any other field passes through as sent, for
 * the ledger's append command refuses it (a server-set field with why: spec 2.6, ledger-commands.ts).
 * The OpenAPI document still says no other property is accepted.
 */
export function eventBody<S extends z.core.$ZodLooseShape>(shape: S) {
  return z
    .object(shape, {
      error: (issue) => (issue.code === 'invalid_type' && issue.path?.length === 0 ? 'the body must be a JSON object' : undefined),
    })
    .catchall(z.unknown())
    .meta({ additionalProperties: false })
}

export const appendBody = eventBody({
  ScopeKey: scopeKeySchema.describe('The scope (container) to append to. Required.'),
  ...eventFields,
})

export function activityLogRoutes(services: ApiServices): AnyRoute[] {
  const ledger: EdgeLedger = services.ledger
  return [
    defineRoute({
      method: 'POST',
      path: '/provenance/events',
      operationId: 'appendActivityEvent',
      summary: "Append an event to a scope's activity log",
      description: `Appends one record to the chain of \`ScopeKey\` and returns it as stored, with its RecordID and digest, once it is durably committed. The server sets \`userId\` (from the token) and \`timestamp\` (its clock); a body that sends \`userId\`, \`actor\`, \`timestamp\`, \`RecordID\` or a digest is a 400, as is any field other than ${EVENT_FIELDS}. Property names are case-insensitive. The body is parsed without loss (duplicate keys and numbers JSON cannot hold exactly are a 400).`,
      tag: 'Activity log',
      rights: ['provenance:append'],
      body: appendBody,
      responses: { 200: { description: 'The stored record.', schema: recordSchema } },
      commitsCallWithEvent: true,
      handler: async ({ caller, body, callRecord }) => {
        const { ScopeKey, ...fields } = body
        return currentRecord(await ledger.append(caller, { scopeKey: ScopeKey, ...fields }, callRecord))
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/events/query',
      operationId: 'queryActivityEvents',
      summary: "Query a scope's activity log, or the Platform-Config records",
      description: `Records of the chain of \`scopeKey\`, filtered by \`entityType\`, \`actionType\` and \`userId\` (exact matches) and by time (\`startDate\` inclusive, \`endDate\` exclusive; a date alone includes that whole day). Without \`scopeKey\`, the workspace-level Platform-Config records: the platform's own change history (every API call and decision). Newest first unless \`order=asc\`. \`limit\` defaults to 100 (at most 1000), \`offset\` to 0; \`totalCount\` is the number of matching records.`,
      tag: 'Activity log',
      rights: ['provenance:read'],
      query: z.object({
        scopeKey: scopeKeySchema.optional().describe('The scope; omit it for the Platform-Config records.'),
        entityType: filterText('entityType').optional(),
        actionType: filterText('actionType').optional(),
        userId: filterText('userId').optional(),
        ...pagingQuery,
        order: z
          .enum(['desc', 'asc'], { error: 'order is desc (newest first) or asc' })
          .default('desc')
          .describe('desc (default): newest first; asc: oldest first.'),
      }),
      responses: {
        200: {
          description: 'One page of matching records and their total count.',
          schema: z.object({
            ScopeKey: z.string().nullable(),
            totalCount: z.number().int(),
            limit: z.number().int(),
            offset: z.number().int(),
            order: z.enum(['desc', 'asc']),
            results: z.array(recordSchema),
          }),
        },
      },
      handler: async ({ caller, query }) => {
        const { records, total } = await ledger.query(caller, {
          scopeKey: query.scopeKey,
          filter: {
            ...(query.entityType !== undefined ? { entityType: query.entityType } : {}),
            ...(query.actionType !== undefined ? { actionType: query.actionType } : {}),
            ...(query.userId !== undefined ? { userId: query.userId } : {}),
            ...dateRange(query.startDate, query.endDate),
          },
          page: { limit: query.limit, offset: query.offset, order: query.order },
        })
        return {
          ScopeKey: query.scopeKey ?? null,
          totalCount: total,
          limit: query.limit,
          offset: query.offset,
          order: query.order,
          results: records.map(currentRecord),
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/provenance/events/verify',
      operationId: 'verifyActivityLog',
      summary: "Verify a scope's chain from genesis to tip, and optionally one record",
      description:
        "Recomputes every digest and link of the chain of `ScopeKey` (the Platform-Config records without it) on one read snapshot, and compares the records with the head row, the newest signed checkpoint, the workspace heads log and, when given, a `TrustedCheckpoint` the caller kept (a C2SP signed note from `GET /oi-api/provenance/checkpoints/latest`): that catches a consistent rewrite (split view, `ForkDetected`) or a rollback (`TRUNCATED`). Without `RecordID`, `Valid` is null. With it, that record's own digest is recomputed as well: `Valid: true` with `ChainValid: false` is a real answer. `RecordID` must be a string of exactly 12 digits (400 otherwise, before anything is read); past the end of the chain it is a 404; missing inside the chain (deleted) it gives `Valid: false`. Costly and authoritative: not meant to be polled (use the checkpoint and the proofs).",
      tag: 'Activity log',
      rights: ['provenance:verify'],
      body: z
        .strictObject(
          {
            ScopeKey: scopeKeySchema.nullable().optional().describe('The scope; omit it (or null) for the Platform-Config records.'),
            RecordID: recordIdSchema.nullable().optional(),
            TrustedCheckpoint: filterText('TrustedCheckpoint', 10_000)
              .nullable()
              .optional()
              .describe(
                "A signed checkpoint note the caller kept earlier (text of GET /oi-api/provenance/checkpoints/latest → checkpoint): this container's, or the workspace heads log's (`headsLog=true`), which shows a container deleted with its heads-log entries.",
              ),
          },
          {
            error: (issue) =>
              issue.code === 'unrecognized_keys'
                ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; verify takes ScopeKey, RecordID and TrustedCheckpoint`
                : undefined,
          },
        )
        .optional(),
      responses: {
        200: { description: 'The verdict (spec 2.7).', schema: verdictSchema },
        404: { description: 'A well-formed RecordID past the end of the chain (or in an empty container).' },
      },
      handler: async ({ caller, body }) => {
        const { verdict } = await ledger.verify(caller, {
          scopeKey: body?.ScopeKey ?? null,
          recordId: body?.RecordID,
          trustedCheckpoint: body?.TrustedCheckpoint ?? null,
        })
        return verdict
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/events/export',
      operationId: 'exportActivityLog',
      summary: "Export a scope's activity log as JSON or CSV, with its signed checkpoint",
      description:
        "Streams the records of `scopeKey` (the Platform-Config records without it) in the date range, every field exactly as stored (digests included), followed by the container's newest signed checkpoint with an RFC 9162 proof tying it to the last exported record, the verifier key, and a signed seal over the file's header. `provenant verify-export FILE --public-key K` checks it offline; any edit makes it fail. Format: docs/design/ledger.md §7.",
      tag: 'Activity log',
      rights: ['provenance:read'],
      query: z.object({
        format: z.enum(['json', 'csv'], { error: 'format is json or csv' }).default('json').describe('json (default) or csv.'),
        scopeKey: scopeKeySchema.optional(),
        startDate: pagingQuery.startDate,
        endDate: pagingQuery.endDate,
      }),
      responses: {
        200: { description: 'The export (application/json or text/csv), streamed.', contentType: 'application/json' },
      },
      handler: async ({ caller, query, reply }) => {
        const range = dateRange(query.startDate, query.endDate)
        const filter: Record<string, string> = { format: query.format }
        if (query.scopeKey !== undefined) filter['scopeKey'] = query.scopeKey
        if (query.startDate !== undefined) filter['startDate'] = query.startDate
        if (query.endDate !== undefined) filter['endDate'] = query.endDate
        const { contentType, stream } = await ledger.exportLog(caller, {
          scopeKey: query.scopeKey ?? null,
          format: query.format,
          ...range,
          filter,
        })
        reply
          .type(contentType)
          .header(
            'content-disposition',
            `attachment; filename="${exportFileName(query.scopeKey ?? null, query.format, services.clock.now())}"`,
          )
        return reply.send(stream)
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/checkpoints/latest',
      operationId: 'latestActivityCheckpoint',
      summary: "The newest signed checkpoint of a scope's log, the Platform-Config log or the heads log",
      description:
        "The newest checkpoint the server signed for the container (one is signed after every committed batch): a C2SP signed note (c2sp.org/tlog-checkpoint: origin, size, RFC 9162 root; Ed25519, plus a timestamped cosignature carrying the issue time). Keep it: passing it back as `TrustedCheckpoint` to verify, or checking proofs against it, detects any later rewrite, rollback or split view. `headsLog=true` gives the workspace heads log's checkpoint instead, which commits to every container's checkpoints (so deleting a whole container is detectable). The verifier key is at `GET /.well-known/provenant/activity-log-key` (no token needed).",
      tag: 'Activity log',
      rights: ['provenance:read'],
      query: z.object({
        scopeKey: scopeKeySchema.optional(),
        headsLog: z
          .enum(['true', 'false'], { error: 'headsLog is true or false' })
          .optional()
          .describe("true: the workspace heads log's checkpoint."),
      }),
      responses: {
        200: {
          description: 'The checkpoint.',
          schema: z.object({
            ScopeKey: z.string().nullable(),
            log: z.enum(['scope', 'platform', 'heads']),
            origin: z.string(),
            size: z.number().int(),
            rootHash: z.string().describe('Hex RFC 9162 root of the first `size` records.'),
            issuedAt: z.string(),
            checkpoint: z.string().describe('The signed note, verbatim.'),
          }),
        },
        404: { description: 'No checkpoint yet (nothing was ever appended).' },
      },
      handler: async ({ caller, query }) => {
        const heads = query.headsLog === 'true'
        const cp = await ledger.latestCheckpoint(caller, { scopeKey: query.scopeKey ?? null, headsLog: heads })
        return {
          ScopeKey: heads ? null : (query.scopeKey ?? null),
          log: heads ? ('heads' as const) : query.scopeKey === undefined ? ('platform' as const) : ('scope' as const),
          origin: cp.origin,
          size: cp.size,
          rootHash: hex(cp.root),
          issuedAt: new Date(cp.issuedAt).toISOString(),
          checkpoint: cp.note,
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/proofs/inclusion',
      operationId: 'activityInclusionProof',
      summary: 'RFC 9162 inclusion proof of one record',
      description:
        "The audit path showing that record `RecordID` is leaf `RecordID − 1` of the Merkle tree of the first `treeSize` records (default: the newest checkpoint's size), with the root and, when one exists, the signed checkpoint of that size. The record's digest is its leaf hash. Verify with RFC 9162 §2.1.3.2; O(log n) instead of a whole-chain verify.",
      tag: 'Activity log',
      rights: ['provenance:read'],
      query: z.object({
        scopeKey: scopeKeySchema.optional(),
        RecordID: recordIdSchema.nonoptional({ error: 'RecordID is required: a string of 12 digits such as "000000000001"' }),
        treeSize: wholeNumber('treeSize', 1).optional(),
      }),
      responses: {
        200: {
          description: 'The proof.',
          schema: z.object({
            ScopeKey: z.string().nullable(),
            RecordID: z.string(),
            leafIndex: z.number().int(),
            treeSize: z.number().int(),
            leafHash: z.string(),
            rootHash: z.string(),
            proof: z.array(z.string()).describe('Hex hashes, leaf to root.'),
            checkpoint: z.string().nullable(),
          }),
        },
        404: { description: 'RecordID past the end of the chain.' },
      },
      handler: async ({ caller, query }) => {
        const p = await ledger.proveInclusion(caller, {
          scopeKey: query.scopeKey ?? null,
          recordId: query.RecordID,
          ...(query.treeSize !== undefined ? { treeSize: query.treeSize } : {}),
        })
        return {
          ScopeKey: query.scopeKey ?? null,
          RecordID: query.RecordID as string,
          leafIndex: p.seq - 1,
          treeSize: p.treeSize,
          leafHash: hex(p.leafHash),
          rootHash: hex(p.rootHash),
          proof: p.proof.map(hex),
          checkpoint: p.checkpoint,
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/provenance/proofs/consistency',
      operationId: 'activityConsistencyProof',
      summary: 'RFC 9162 consistency proof between two checkpoints',
      description:
        "The proof that the tree of the first `to` records (default: the newest checkpoint's size) extends the tree of the first `from` records, with both roots and the signed checkpoints of those sizes when they exist. An auditor holding an older checkpoint checks the newer one with it (RFC 9162 §2.1.4.2): a failure means the log was rewritten or forked.",
      tag: 'Activity log',
      rights: ['provenance:read'],
      query: z.object({
        scopeKey: scopeKeySchema.optional(),
        from: wholeNumber('from', 0),
        to: wholeNumber('to', 0).optional(),
      }),
      responses: {
        200: {
          description: 'The proof.',
          schema: z.object({
            ScopeKey: z.string().nullable(),
            fromSize: z.number().int(),
            toSize: z.number().int(),
            fromRoot: z.string(),
            toRoot: z.string(),
            proof: z.array(z.string()),
            fromCheckpoint: z.string().nullable(),
            toCheckpoint: z.string().nullable(),
          }),
        },
      },
      handler: async ({ caller, query }) => {
        const p = await ledger.proveConsistency(caller, {
          scopeKey: query.scopeKey ?? null,
          from: query.from,
          ...(query.to !== undefined ? { to: query.to } : {}),
        })
        return {
          ScopeKey: query.scopeKey ?? null,
          fromSize: p.fromSize,
          toSize: p.toSize,
          fromRoot: hex(p.fromRoot),
          toRoot: hex(p.toRoot),
          proof: p.proof.map(hex),
          fromCheckpoint: p.fromCheckpoint,
          toCheckpoint: p.toCheckpoint,
        }
      },
    }),
  ]
}
