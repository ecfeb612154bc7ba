/**
 * @module
 * Pull connectors: their supervisor, status and backoff (issue 6). Other features import from here,
 * never from the files behind it.
 */
export type { ConnectorStatus, ConnectorStatusStore } from './connector-status.js'
export {
  type ConnectionStatusView,
  type ConnectorStatusService,
  type ConnectorStatusServiceDeps,
  createConnectorStatusService,
} from './connector-status-service.js'
export {
  type ConnectorFactory,
  type ConnectorSupervisor,
  createConnectorSupervisor,
  type SupervisorDeps,
} from './connector-supervisor.js'
