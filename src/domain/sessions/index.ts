/**
 * @module
 * The sessions feature's public surface for other features (style notes §6.1; architecture rule
 * 10): a signed-in person's session and the password re-entry check. Grows as other features move
 * their imports here.
 */
export type { PortalSession, SessionService, SignatureCheck } from './session-service.js'
