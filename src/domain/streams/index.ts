/**
 * @module
 * Live events and committed changes as streams (spec 4.3, 4.10, 6; design §9). Other features
 * import from here, never from the files behind it.
 */
export { type ChangeFeedDeps, type ChangeFeedService, openChangeFeed } from './change-feed.js'
export {
  type BusEvent,
  type ChangeCommitted,
  createLocalEventBus,
  type EventBus,
  type RowsIngested,
  type TokenRevoked,
} from './event-bus.js'
export { createLiveHub, type LiveHub, type LiveHubDeps, type LiveHubOptions } from './live-hub.js'
