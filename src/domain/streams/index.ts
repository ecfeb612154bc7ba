/**
 * @module
 * Live events and committed changes as streams (spec 4.3, 4.10, 6; design §9). Other features
 * import from here, never from the files behind it.
 */
export { type ChangeFeedDeps, type ChangeFeedService, openChangeFeed, parseLastEventId } from './change-feed.js'
export {
  type BusEvent,
  type ChangeCommitted,
  createLocalEventBus,
  type EventBus,
  type RowsIngested,
  type TokenRevoked,
} from './event-bus.js'
export {
  createLiveHub,
  type LiveBatch,
  type LiveControl,
  type LiveHub,
  type LiveHubDeps,
  type LiveHubOptions,
  type LiveSubscription,
  type LiveView,
  parseSince,
} from './live-hub.js'
export { checkLiveSelection, type LiveSelection, liveConnections, liveSurfacesOf, parseNameList } from './live-selection.js'
