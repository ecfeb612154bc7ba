/**
 * @module
 * The Part 11 electronic-signature protocol (21 CFR Part 11 §11.50, §11.200; issue 19 item 1): the
 * signer re-enters the password, wrong entries count toward the sign-in throttle (the session
 * service's, so the form cannot be used to guess passwords), and every refusal is recorded in the
 * activity log of the scope of what was being signed. A correct password yields a
 * ConfirmedSignature, the only thing a decision accepts as a signature.
 */
import type { ActivityLog } from '../activity/index.js'
import type { PortalSession, SessionService } from '../sessions/index.js'
import { type ConfirmedSignature, mintSignature, type SignatureMeaning, type SignatureSubject } from './confirmed-signature.js'

/** What is being signed, with what the refusal record names (the thing's scope and entity). */
export interface SignatureRequest {
  readonly password: string
  readonly clientAddress: string
  readonly meaning: SignatureMeaning
  readonly subject: Omit<SignatureSubject, 'workspaceId'>
  /** The activity log the refusal is recorded in, and the entity it is about. */
  readonly record: { readonly scopeKey: string; readonly entityType: string; readonly entityId: string }
}

export type SignatureOutcome =
  | { readonly outcome: 'confirmed'; readonly signature: ConfirmedSignature }
  | { readonly outcome: 'refused' }
  | { readonly outcome: 'throttled'; readonly limitedBy: 'account' | 'address'; readonly retryAfterMs: number }

export interface SignatureService {
  /**
   * Confirms the session's person signs `subject` with `meaning`. MUST check the password against
   * the session's own account under the sign-in throttle, MUST record every refusal (wrong password
   * or throttled) before answering, and returns a signature only when the password was right.
   */
  sign(session: PortalSession, request: SignatureRequest): Promise<SignatureOutcome>
}

export interface SignatureServiceDeps {
  readonly sessions: Pick<SessionService, 'confirmPassword'>
  readonly activity: Pick<ActivityLog, 'recordDecision'>
  readonly clock: { now(): number }
}

/** The refusal record's details key for the thing signed, e.g. `correctionId`. */
const idKey = (kind: string): string => `${kind}Id`

export function createSignatureService(deps: SignatureServiceDeps): SignatureService {
  return {
    async sign(session, request) {
      const check = await deps.sessions.confirmPassword(session, request.password, request.clientAddress)
      if (check.outcome === 'confirmed') {
        return {
          outcome: 'confirmed',
          signature: mintSignature({
            signer: { id: session.account.id, name: session.account.name },
            subject: { ...request.subject, workspaceId: session.workspace.id },
            meaning: request.meaning,
            confirmedAt: deps.clock.now(),
          }),
        }
      }
      await deps.activity.recordDecision({
        workspaceId: session.workspace.id,
        scopeKey: request.record.scopeKey,
        entityType: request.record.entityType,
        entityId: request.record.entityId,
        actionType: 'signature-refused',
        actor: { id: session.account.id, name: session.account.name, via: 'portal' },
        details: {
          [idKey(request.subject.kind)]: request.subject.id,
          meaning: request.meaning,
          reason: check.outcome === 'throttled' ? 'too many failed password entries' : 'wrong password',
          clientAddress: request.clientAddress,
        },
      })
      return check
    },
  }
}
