/**
 * @module
 * Reading and writing the portal's cookies (no cookie library needed for two cookies). Cookie
 * values we set are base64url, so they never need quoting.
 */

/** Parses a Cookie header; the first occurrence of a name wins; undecodable values are skipped. */
export function parseCookies(header: string | undefined): ReadonlyMap<string, string> {
  const out = new Map<string, string>()
  if (!header) return out
  for (const part of header.split(';').map((p) => p.trim())) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    let value = part.slice(eq + 1).trim()
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1)
    if (out.has(name)) continue
    try {
      out.set(name, decodeURIComponent(value))
    } catch {
      // A malformed value is treated as absent.
    }
  }
  return out
}

export interface CookieOptions {
  readonly path: string
  readonly secure: boolean
  /** Seconds; omitted = a browser-session cookie; 0 deletes the cookie. */
  readonly maxAge?: number
}

/** A Set-Cookie value: always HttpOnly and SameSite=Strict (issue 9). */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`bad cookie name ${name}`)
  if (!/^[A-Za-z0-9_-]*$/.test(value)) throw new Error('cookie values must be base64url')
  const parts = [`${name}=${value}`, `Path=${options.path}`, 'HttpOnly', 'SameSite=Strict']
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`)
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}
