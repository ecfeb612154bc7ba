/**
 * @module
 * The value that proves an electronic signature was checked (21 CFR Part 11; issue 19 item 1). Only
 * the signatures service can make one: the constructor needs a key this module does not export,
 * and a `#private` field makes the class nominal, so an object literal or a cast-free look-alike is
 * a type error and fails `isConfirmedSignature` at run time. A decision that carries a signature
 * (corrections.approve/reject in the portal) takes one and spends it (acceptSignature): it names
 * the signer, what was signed and with which meaning, and it signs exactly one decision.
 */
import { ForbiddenError } from '../errors.js'

/** What a signature means (Part 11 §11.50): the button the signer pressed. */
export type SignatureMeaning = 'approved' | 'rejected'

/** What was signed: one decision about one thing. */
export interface SignatureSubject {
  readonly workspaceId: string
  /** e.g. `correction`. */
  readonly kind: string
  readonly id: string
}

type SignatureFields = Pick<ConfirmedSignature, 'signer' | 'subject' | 'meaning' | 'confirmedAt'>

const MINT = Symbol('confirmed-signature')
const spent = new WeakSet<object>()
/** Set by the class's static block: the one way to call the private constructor. */
let mint: (fields: SignatureFields) => ConfirmedSignature

export class ConfirmedSignature {
  readonly #confirmed = true
  readonly signer: { readonly id: string; readonly name: string }
  readonly subject: SignatureSubject
  readonly meaning: SignatureMeaning
  /** When the password was confirmed (ms since the epoch). */
  readonly confirmedAt: number

  static {
    mint = (fields) => new ConfirmedSignature(MINT, fields)
  }

  /** For the signatures service only (`mintSignature`); a call with any other key throws. */
  private constructor(key: symbol, fields: SignatureFields) {
    if (key !== MINT) throw new TypeError('a ConfirmedSignature is made only by the signatures service')
    this.signer = fields.signer
    this.subject = fields.subject
    this.meaning = fields.meaning
    this.confirmedAt = fields.confirmedAt
    Object.freeze(this)
  }

  /** True only for a value this module made (a forged object has no `#confirmed` field). */
  static isConfirmed(value: unknown): value is ConfirmedSignature {
    return typeof value === 'object' && value !== null && #confirmed in value
  }
}

/**
 * Made by the signatures service once the password was re-entered correctly. Not exported from
 * index.ts, and the architecture test lets no file outside src/domain/signatures/ import this one.
 */
export function mintSignature(fields: SignatureFields): ConfirmedSignature {
  return mint(fields)
}

/**
 * Checks that `signature` is one the signatures service confirmed, for this signer, this subject
 * and this meaning, and spends it (a signature signs one decision). Throws ForbiddenError (403)
 * otherwise: no record may claim a signature nobody checked.
 */
export function acceptSignature(
  signature: ConfirmedSignature,
  expected: { readonly signerId: string; readonly subject: SignatureSubject; readonly meaning: SignatureMeaning },
): void {
  if (!ConfirmedSignature.isConfirmed(signature))
    throw new ForbiddenError('this decision carries a signature the signatures service did not confirm; nothing was signed')
  const s = signature.subject
  if (
    signature.signer.id !== expected.signerId ||
    s.workspaceId !== expected.subject.workspaceId ||
    s.kind !== expected.subject.kind ||
    s.id !== expected.subject.id ||
    signature.meaning !== expected.meaning
  )
    throw new ForbiddenError(
      `the signature was given by ${signature.signer.name} for ${s.kind} ${s.id} with the meaning "${signature.meaning}", not for this decision; nothing was signed`,
    )
  if (spent.has(signature)) throw new ForbiddenError('this signature was already used for a decision; sign again')
  spent.add(signature)
}
