/**
 * @module
 * The access feature's public surface for other features (style notes §6.1; architecture rule 10):
 * who is calling and what the caller's scopes allow. Grows as other features move their imports here.
 */
export { type Caller, hasRight, inScope, type TokenScopes } from './caller.js'
