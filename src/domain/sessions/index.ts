/**
 * @module
 * Portal sign-in sessions and their throttling. Other features import from here, never from the
 * files behind it.
 */
export {
  createSessionService,
  type PortalSession,
  type SessionService,
  type SessionServiceDeps,
  type SignatureCheck,
  type SignInAttempt,
  type SignInOutcome,
} from './session-service.js'
export type { SessionStore } from './session-store.js'
