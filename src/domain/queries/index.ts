/**
 * @module
 * Warm queries and ad-hoc KQL (spec 2.1-2.3, 4.1). Other features import from here, never from the
 * files behind it.
 */
export type { QueryExecutor } from './query-executor.js'
export {
  createQueryService,
  MAX_QUERY_LENGTH,
  type QueryCallOptions,
  type QueryResponse,
  type QueryService,
  type QueryServiceDeps,
} from './query-service.js'
