/**
 * @module
 * The process-wide secret scrubber (design §11): every credential value the vault reveals is
 * registered here (for the life of the process: a value shared by two connections must stay
 * scrubbed after one of them is cleared), and every log line (logging.ts) and every error message that leaves the server
 * (http/error-envelope.ts) passes through `scrub`, so a driver error that quotes a password (a
 * connection string, an MQTT CONNACK text) is cleaned before anyone sees it. Each secret is matched
 * as written and in the forms it is commonly quoted in: JSON-escaped, URL-encoded, base64 and hex.
 *
 * Values shorter than MIN_SECRET_LENGTH are not registered: scrubbing "a" or "42" would mangle every
 * log line and hide nothing worth hiding (docs/decisions.md, "Connection credentials").
 */

export const MIN_SECRET_LENGTH = 4
export const SCRUBBED = '[REDACTED]'
/** Registrations kept; the oldest are forgotten first (a bound on memory, never reached in practice). */
const MAX_SECRETS = 10_000

const secrets = new Set<string>()
let pattern: RegExp | undefined
let dirty = false

function formsOf(value: string): string[] {
  const forms = new Set<string>([value])
  forms.add(JSON.stringify(value).slice(1, -1))
  forms.add(JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1))
  forms.add(encodeURIComponent(value))
  const bytes = Buffer.from(value, 'utf8')
  const b64 = bytes.toString('base64')
  forms.add(b64)
  forms.add(b64.replace(/=+$/, ''))
  forms.add(bytes.toString('base64url').replace(/=+$/, ''))
  forms.add(bytes.toString('hex'))
  forms.add(bytes.toString('hex').toUpperCase())
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH)
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Registers a secret value; every later `scrub` replaces it (and its encoded forms). */
export function registerSecret(value: string): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return
  for (const form of formsOf(value)) {
    if (secrets.has(form)) continue
    secrets.add(form)
    dirty = true
  }
  while (secrets.size > MAX_SECRETS) secrets.delete(secrets.values().next().value as string)
}

/** `text` with every registered secret replaced by [REDACTED]. */
export function scrub(text: string): string {
  if (secrets.size === 0) return text
  if (dirty || !pattern) {
    // Longest first, so a secret that contains another is replaced whole.
    const alternatives = [...secrets].sort((a, b) => b.length - a.length).map(escapeRe)
    pattern = new RegExp(alternatives.join('|'), 'g')
    dirty = false
  }
  return text.replace(pattern, SCRUBBED)
}

/** How many forms are registered (tests). */
export function registeredSecretCount(): number {
  return secrets.size
}
