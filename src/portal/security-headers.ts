/**
 * @module
 * The portal's security headers. Everything the portal loads comes from this origin, nothing may
 * frame it, and no script is inline or evaluated. The Explore page's editor (CodeMirror) adds its
 * stylesheet as a `<style>` element at run time: that page alone also allows style elements that
 * carry the response's nonce (docs/security.md), nothing else.
 */

const POLICY = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
  'base-uri': "'none'",
} as const

function serialise(policy: Readonly<Record<string, string>>): string {
  return Object.entries(policy)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ')
}

export const SECURITY_HEADERS = {
  'content-security-policy': serialise(POLICY),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
} as const

/** The same policy, with style elements carrying this nonce allowed too (the Explore page's editor). */
export function policyWithStyleNonce(nonce: string): string {
  return serialise({ ...POLICY, 'style-src': `'self' 'nonce-${nonce}'` })
}
