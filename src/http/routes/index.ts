/**
 * @module
 * Every /oi-api route module, one per spec section.
 */
import type { Services } from '../../domain/services.js'
import type { AnyRoute } from '../route-registry.js'
import { correctionRoutes } from './corrections.js'
import { exportRoutes } from './exports.js'
import { ingestRoutes } from './ingest.js'
import { legacyAmendmentLogRoutes } from './legacy-amendment-logs.js'
import { warmQueryRoutes } from './warm-queries.js'

export function apiRoutes(services: Services): AnyRoute[] {
  return [...warmQueryRoutes(services.queries), ...ingestRoutes(services.ingest), ...correctionRoutes(services), ...legacyAmendmentLogRoutes(services), ...exportRoutes(services.exports)]
}
