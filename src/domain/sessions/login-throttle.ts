/**
 * @module
 * The portal's sign-in throttle against password guessing: too many recent failures for one
 * account name, or from one client address, refuse further attempts for a while without checking
 * the password. The API has no rate limit (spec 8); this guards only the portal's sign-in form.
 */

export interface ThrottleRule {
  /** Failures within the window that close the door. */
  readonly failures: number
  readonly windowMs: number
}

export interface LoginLimits {
  /** Per account name (known or not, so the answer never tells which names exist). */
  readonly account: ThrottleRule
  /** Per client address: catches one address trying many names. */
  readonly address: ThrottleRule
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  account: { failures: 5, windowMs: 15 * 60_000 },
  address: { failures: 20, windowMs: 15 * 60_000 },
}

/** The throttle keys of one attempt. Account names compare case-insensitively here. */
export function throttleKeys(accountName: string, clientAddress: string): { readonly account: string; readonly address: string } {
  return { account: `account:${accountName.trim().toLowerCase().slice(0, 200)}`, address: `address:${clientAddress}` }
}

export type ThrottleVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly limitedBy: 'account' | 'address'; readonly retryAfterMs: number }

/**
 * Decides from the recent failures of both keys. When refused, `retryAfterMs` is when the oldest
 * counted failure leaves the window (then one more attempt is allowed).
 */
export function throttleVerdict(
  limits: LoginLimits,
  failures: {
    readonly account: { count: number; oldest: number } | undefined
    readonly address: { count: number; oldest: number } | undefined
  },
  now: number,
): ThrottleVerdict {
  for (const kind of ['account', 'address'] as const) {
    const seen = failures[kind]
    const rule = limits[kind]
    if (seen && seen.count >= rule.failures) {
      return { allowed: false, limitedBy: kind, retryAfterMs: Math.max(1000, seen.oldest + rule.windowMs - now) }
    }
  }
  return { allowed: true }
}
