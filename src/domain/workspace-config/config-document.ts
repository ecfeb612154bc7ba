/**
 * @module
 * The workspace configuration document ("configuration as code", design §4): connections,
 * surfaces, warm queries, reason categories and settings in one versioned document. Validation
 * here is complete: a document that passes can be applied without further surprises, and every
 * problem is reported with its path in the document (`connections[1].columns[0].type`).
 */
import { z } from 'zod'
import { KQL_TYPES, parseTypeName } from '../../kql/index.js'

/** KQL identifiers for tables and columns (letters, digits, underscore; no leading digit). */
export const KQL_IDENTIFIER_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
/** Lookups of connections, surfaces and warm queries: URL-safe, 1–64 characters. */
export const LOOKUP_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** A warm query's API path: slash-separated lookup-like segments, e.g. `plant/line-1/hourly-temp`. */
export const API_PATH_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,9}$/

/** Physical columns every connection table has besides the declared ones. */
export const RESERVED_COLUMNS = ['_rowid', '_ingested_at'] as const

export const DEFAULT_REASON_CATEGORIES = [
  { id: 'data-entry-error', description: 'A value was typed or entered wrongly.' },
  { id: 'transcription-error', description: 'A value was copied wrongly from another record.' },
  { id: 'recalculation', description: 'A derived value was recalculated (formula or calibration corrected).' },
  { id: 'delayed-entry', description: 'A value recorded late, after the time it describes.' },
  { id: 'instrument-fault', description: 'The measuring instrument was faulty or out of calibration.' },
  { id: 'other', description: 'Any other reason, explained in the correction.' },
] as const

const kqlType = z.string().transform((value, ctx) => {
  const type = parseTypeName(value)
  if (!type) {
    ctx.addIssue({ code: 'custom', message: `unknown type "${value}"; use one of ${KQL_TYPES.join(', ')}` })
    return z.NEVER
  }
  return type
})

const column = z.strictObject({
  name: z.string().regex(KQL_IDENTIFIER_RE, 'a column name is letters, digits and underscores, not starting with a digit'),
  type: kqlType,
  description: z.string().max(500).optional(),
})

export const CONNECTION_KINDS = ['push', 'postgres', 'mqtt'] as const
export type ConnectionKind = (typeof CONNECTION_KINDS)[number]

const connection = z.strictObject({
  lookup: z.string().regex(LOOKUP_RE, 'a lookup is 1-64 letters, digits, dots, dashes or underscores'),
  kind: z.enum(CONNECTION_KINDS),
  table: z.string().regex(KQL_IDENTIFIER_RE, 'a KQL table name is letters, digits and underscores, not starting with a digit'),
  description: z.string().max(1000).optional(),
  columns: z.array(column).min(1).max(500),
  /** Kind-specific settings (never credentials: those are set separately and stored encrypted). */
  settings: z.record(z.string(), z.unknown()).default({}),
})

const surface = z.strictObject({
  lookup: z.string().regex(LOOKUP_RE, 'a lookup is 1-64 letters, digits, dots, dashes or underscores'),
  name: z.string().max(200).optional(),
  description: z.string().max(1000).optional(),
  connections: z.array(z.string()).default([]),
})

const warmQuery = z.strictObject({
  lookup: z.string().regex(LOOKUP_RE, 'a lookup is 1-64 letters, digits, dots, dashes or underscores'),
  path: z.string().regex(API_PATH_RE, 'an API path is slash-separated segments of letters, digits, dots, dashes or underscores').optional(),
  description: z.string().max(2000).optional(),
  /** The saved KQL text. A warm query without it exists, but running it is a 400 (spec 2.1). */
  query: z.string().max(100_000).optional(),
})

const reasonCategory = z.union([
  z
    .string()
    .regex(LOOKUP_RE, 'a reason category id is 1-64 letters, digits, dots, dashes or underscores')
    .transform((id) => ({ id, description: undefined as string | undefined })),
  z.strictObject({
    id: z.string().regex(LOOKUP_RE, 'a reason category id is 1-64 letters, digits, dots, dashes or underscores'),
    description: z.string().max(500).optional(),
  }),
])

const amendmentSettings = z.strictObject({
  /** Corrections wait for approval (status pending) instead of applying at once. */
  approvalRequired: z.boolean().default(true),
  /** The approver must be a different person than the author. */
  twoPersonApproval: z.boolean().default(true),
  /** When set, approval is required only for these reason categories / entity types. */
  approvalRequiredFor: z
    .strictObject({
      reasonCategories: z.array(z.string()).optional(),
      entityTypes: z.array(z.string()).optional(),
    })
    .optional(),
})

const capabilitySettings = z.strictObject({
  mcp: z.boolean().default(true),
  liveStream: z.boolean().default(true),
  changeStream: z.boolean().default(true),
  exports: z.boolean().default(true),
  connectors: z
    .strictObject({
      push: z.boolean().default(true),
      postgres: z.boolean().default(true),
      mqtt: z.boolean().default(true),
    })
    .default({ push: true, postgres: true, mqtt: true }),
})

const querySettings = z.strictObject({
  /** Rows a query returns at most; beyond it the result says `truncated: true`. */
  rowCap: z.number().int().min(1).max(1_000_000).default(10_000),
  /** Seconds a query may run before it is stopped with a 400 naming the cap. */
  timeoutSeconds: z.number().min(0.1).max(600).default(30),
})

const settings = z.strictObject({
  amendments: amendmentSettings.default({ approvalRequired: true, twoPersonApproval: true }),
  capabilities: capabilitySettings.default({
    mcp: true,
    liveStream: true,
    changeStream: true,
    exports: true,
    connectors: { push: true, postgres: true, mqtt: true },
  }),
  queries: querySettings.default({ rowCap: 10_000, timeoutSeconds: 30 }),
})

export const workspaceConfigSchema = z.strictObject({
  /** Optional guard: when present it must name the workspace the document is applied to. */
  workspace: z.string().optional(),
  connections: z.array(connection).default([]),
  surfaces: z.array(surface).default([]),
  warmQueries: z.array(warmQuery).default([]),
  reasonCategories: z.array(reasonCategory).default(() => DEFAULT_REASON_CATEGORIES.map((c) => ({ ...c }))),
  settings: settings.default(() => settings.parse({})),
})

export type WorkspaceConfig = z.output<typeof workspaceConfigSchema>
export type ConnectionConfig = WorkspaceConfig['connections'][number]
export type ColumnConfig = ConnectionConfig['columns'][number]
export type SurfaceConfig = WorkspaceConfig['surfaces'][number]
export type WarmQueryConfig = WorkspaceConfig['warmQueries'][number]
export type ReasonCategory = WorkspaceConfig['reasonCategories'][number]
export type WorkspaceSettings = WorkspaceConfig['settings']

/** The configuration of a workspace nothing was applied to yet. */
export function emptyConfig(): WorkspaceConfig {
  return workspaceConfigSchema.parse({})
}
