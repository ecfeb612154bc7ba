/**
 * @module
 * Electronic signatures (21 CFR Part 11): the protocol and the value that proves a signature was
 * checked. Other features import from here. Making a signature is not exported: only the
 * signature service does it.
 */
export {
  acceptSignature,
  ConfirmedSignature,
  type SignatureMeaning,
  type SignatureSubject,
} from './confirmed-signature.js'
export {
  createSignatureService,
  type SignatureOutcome,
  type SignatureRequest,
  type SignatureService,
  type SignatureServiceDeps,
} from './signature-service.js'
