/**
 * @module
 * Every /oi-api route module, one per spec section.
 */
import type { ApiServices } from '../../domain/services.js'
import type { AnyRoute } from '../route-registry.js'
import { activityLogRoutes } from './activity-log.js'
import { auditLogRoutes } from './audit-logs.js'
import { changeStreamRoutes } from './change-stream.js'
import { correctionRoutes } from './corrections.js'
import { exportRoutes } from './exports.js'
import { ingestRoutes } from './ingest.js'
import { legacyAmendmentLogRoutes } from './legacy-amendment-logs.js'
import { liveStreamRoutes } from './live-stream.js'
import { type McpRouteOptions, mcpRoutes } from './mcp.js'
import { warmQueryRoutes } from './warm-queries.js'

/** Settings routes need besides the services (the MCP endpoint's origin allow-list and links). */
export type ApiRouteOptions = McpRouteOptions

export function apiRoutes(services: ApiServices, options: ApiRouteOptions = { publicUrl: 'http://127.0.0.1' }): AnyRoute[] {
  return [
    ...warmQueryRoutes(services.queries),
    ...ingestRoutes(services.ingest),
    ...correctionRoutes(services),
    ...legacyAmendmentLogRoutes(services),
    ...activityLogRoutes(services),
    ...auditLogRoutes(services),
    ...changeStreamRoutes(services),
    ...liveStreamRoutes(services),
    ...mcpRoutes(services, options),
    ...exportRoutes(services.exports),
  ]
}
