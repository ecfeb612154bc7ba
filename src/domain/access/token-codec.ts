/**
 * @module
 * Signing and verifying access tokens: JWTs signed with EdDSA (Ed25519) by the server's own keys
 * (design §6). The algorithm is pinned, the key is chosen by `kid` from the keyring only, and the
 * audience names this server, so a token from elsewhere, `alg: none` or an HMAC token made with a
 * public key can never verify.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import { UnauthenticatedError } from '../errors.js'
import type { TokenScopes } from './caller.js'

export interface SigningKey {
  readonly kid: string
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
}

/** Keys the server verifies with; `active` signs new tokens. Older keys stay for rotation. */
export interface Keyring {
  readonly active: SigningKey
  /** The public key for a `kid`, or undefined when no process of this server published it. */
  find(kid: string): Promise<KeyObject | undefined>
}

export interface TokenClaims {
  readonly jti: string
  readonly sub: string
  readonly wks: string
  readonly name: string
  readonly rights: readonly string[]
  readonly scopes?: TokenScopes
  readonly iat: number
  readonly exp: number
}

export const TOKEN_TYPE = 'at+jwt'

export function publicKeyOf(privateKey: KeyObject): KeyObject {
  return createPublicKey(privateKey)
}

export async function signToken(keyring: Keyring, audience: string, claims: TokenClaims): Promise<string> {
  const { jti, sub, iat, exp, ...rest } = claims
  return new SignJWT({ ...rest })
    .setProtectedHeader({ alg: 'EdDSA', kid: keyring.active.kid, typ: TOKEN_TYPE })
    .setJti(jti)
    .setSubject(sub)
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(keyring.active.privateKey)
}

/**
 * Verifies signature, algorithm, audience and expiry; returns the claims. Every failure is an
 * UnauthenticatedError whose message says which check failed (never the token itself).
 */
export async function verifyToken(keyring: Keyring, audience: string, token: string, nowMs: number): Promise<TokenClaims> {
  let kid: string | undefined
  try {
    const header = decodeProtectedHeader(token)
    if (header.alg !== 'EdDSA')
      throw new UnauthenticatedError(`token algorithm ${String(header.alg)} is not accepted; tokens are signed with EdDSA`)
    kid = header.kid
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw error
    throw new UnauthenticatedError('the bearer token is not a well-formed JWT')
  }
  const key = kid === undefined ? undefined : await keyring.find(kid)
  if (!key) throw new UnauthenticatedError('the token was signed by a key this server does not know')
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['EdDSA'],
      audience,
      requiredClaims: ['jti', 'sub', 'exp', 'iat'],
      currentDate: new Date(nowMs),
      clockTolerance: 5,
    })
    // jose checks nbf but not an issue time in the future; we issue tokens with iat = now, so a
    // later iat was not issued by us as it stands (clock skew between processes is within 5 s).
    if (typeof payload.iat === 'number' && payload.iat * 1000 > nowMs + 5000)
      throw new UnauthenticatedError('the token is not yet valid (iat claim)')
    if (typeof payload['wks'] !== 'string' || !Array.isArray(payload['rights'])) {
      throw new UnauthenticatedError('the token lacks its workspace or rights claims')
    }
    return payload as unknown as TokenClaims
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw error
    if (error instanceof joseErrors.JWTExpired)
      throw new UnauthenticatedError('the token has expired; create a new one in the portal (API Keys)')
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) throw new UnauthenticatedError('the token signature is invalid')
    if (error instanceof joseErrors.JWTClaimValidationFailed)
      throw new UnauthenticatedError(`the token is not valid here (${error.claim} claim)`)
    throw new UnauthenticatedError('the bearer token could not be verified')
  }
}
