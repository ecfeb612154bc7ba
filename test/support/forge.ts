/**
 * @module
 * Crafting tokens the server must refuse: signed with the server's own key but wrong claims, with
 * a foreign key, with `alg: none` or HS256 (algorithm confusion).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { keyIdOf } from '../../src/adapters/keys/server-identity.js'

export function serverPrivateKey(dataDir: string): KeyObject {
  const dir = join(dataDir, 'keys')
  const file = readdirSync(dir)
    .filter((f) => f.startsWith('jwt-'))
    .sort()
    .at(-1)!
  return createPrivateKey(readFileSync(join(dir, file), 'utf8'))
}

export interface ForgeClaims {
  jti: string
  sub: string
  wks: string
  rights: string[]
  aud: string
  iat?: number
  exp?: number
}

export async function signWith(key: KeyObject, claims: ForgeClaims, kid = keyIdOf(createPublicKey(key))): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ wks: claims.wks, rights: claims.rights, name: 'forged' })
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
    .setJti(claims.jti)
    .setSubject(claims.sub)
    .setAudience(claims.aud)
    .setIssuedAt(claims.iat ?? now)
    .setExpirationTime(claims.exp ?? now + 3600)
    .sign(key)
}

export function foreignKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** An unsigned token (`alg: none`) carrying otherwise valid claims. */
export function unsignedToken(claims: ForgeClaims, kid: string): string {
  const now = Math.floor(Date.now() / 1000)
  return `${b64url({ alg: 'none', kid, typ: 'at+jwt' })}.${b64url({ ...claims, name: 'forged', iat: now, exp: now + 3600 })}.`
}

/** Algorithm confusion: HS256 with the server's public key (PEM) as the HMAC secret. */
export async function hs256WithPublicKey(claims: ForgeClaims, publicKeyPem: string, kid: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ wks: claims.wks, rights: claims.rights })
    .setProtectedHeader({ alg: 'HS256', kid })
    .setJti(claims.jti)
    .setSubject(claims.sub)
    .setAudience(claims.aud)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(publicKeyPem))
}

/** The claims of a real token (decoded, not verified). */
export function claimsOf(token: string): ForgeClaims & { name: string; kid: string } {
  const [header, payload] = token.split('.')
  const h = JSON.parse(Buffer.from(header!, 'base64url').toString()) as { kid: string }
  return { ...(JSON.parse(Buffer.from(payload!, 'base64url').toString()) as ForgeClaims & { name: string }), kid: h.kid }
}
