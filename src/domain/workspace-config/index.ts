/**
 * @module
 * The workspace configuration: connections, surfaces, warm queries, reason categories, settings
 * (spec 2.1-2.3, 2.9). Other features import from here, never from the files behind it.
 */
export { type ConfigChange, describeChanges, diffConfig } from './config-diff.js'
export {
  API_PATH_RE,
  type ColumnConfig,
  type ConnectionConfig,
  LOOKUP_RE,
  type ReasonCategory,
  type SurfaceConfig,
  type WarmQueryConfig,
  type WorkspaceConfig,
  type WorkspaceSettings,
} from './config-document.js'
export {
  type ApplyResult,
  type ConfigActor,
  type ConfigService,
  type ConfigServiceDeps,
  type CurrentConfig,
  createConfigService,
} from './config-service.js'
export type { ConfigCommit, ConfigStore, ConnectionTable, WarmQueryApproval } from './config-store.js'
export { validateConfig } from './validate-config.js'
