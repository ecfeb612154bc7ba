/**
 * @module
 * The errors the domain raises on purpose. Each kind maps to exactly one HTTP status (HTTP_STATUS
 * below, used by both HTTP edges: the API's error envelope and the portal); anything that is not a
 * DomainError is a bug and becomes a generic 500.
 * Messages are written for a person to act on: say what was wrong and what to do instead.
 */

export type ErrorKind = 'invalid-input' | 'unauthenticated' | 'forbidden' | 'not-found' | 'not-provisioned' | 'unavailable' | 'integrity'

/** The one status table (spec 7): the API (http/error-envelope.ts) and the portal answer each kind with it. */
export const HTTP_STATUS = {
  'invalid-input': 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'not-provisioned': 503,
  unavailable: 503,
  integrity: 500,
} as const satisfies Record<ErrorKind, 400 | 401 | 403 | 404 | 500 | 503>

export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
  }
}

/** 400: the request is malformed or breaks a rule. */
export class InvalidInputError extends DomainError {
  readonly kind = 'invalid-input'
}

/** 401: no valid token (missing, malformed, bad signature, expired, revoked, account disabled). */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated'
}

/** 403: a valid caller acting outside its rights or scopes. */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden'
}

/** 404: the thing named does not exist (or is not visible to this workspace). */
export class NotFoundError extends DomainError {
  readonly kind = 'not-found'
}

/** 503: a capability switched off in the workspace settings, or lacking its backing service. */
export class NotProvisionedError extends DomainError {
  readonly kind = 'not-provisioned'
}

/**
 * 503: a dependency failed in a way the caller may retry (e.g. the activity log could not record
 * the call, so the call is refused rather than left unrecorded; design §5).
 */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable'
}

/**
 * 500: the server refuses to go on because its own stored state fails an integrity check (the
 * activity log's chain head is not what it last signed: someone wrote the database around it).
 * Not retryable; the message says what to run.
 */
export class IntegrityError extends DomainError {
  readonly kind = 'integrity'
}
