/**
 * @module
 * AWS Signature Version 4 for S3-compatible object storage, written with node:crypto (no AWS SDK is
 * installed): the Authorization header for PUT and DELETE, and presigned GET URLs (query-string
 * authentication). Checked against the worked examples of AWS's S3 documentation in
 * sigv4.test.ts. Secrets never leave this module except as signatures.
 */
import { createHash, createHmac } from 'node:crypto'

export interface AwsCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** Temporary credentials (STS) also carry a session token. */
  readonly sessionToken?: string | undefined
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
const ALGORITHM = 'AWS4-HMAC-SHA256'

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** RFC 3986 percent-encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ (and `/` when kept). */
export function uriEncode(text: string, keepSlash = false): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === '/')) out += c
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** `20130524T000000Z` */
export function amzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
}

/** The derived key: HMAC chain over date, region, service and `aws4_request`. */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const kDate = createHmac('sha256', `AWS4${secretAccessKey}`).update(date).digest()
  const kRegion = createHmac('sha256', kDate).update(region).digest()
  const kService = createHmac('sha256', kRegion).update(service).digest()
  return createHmac('sha256', kService).update('aws4_request').digest()
}

/** Encoded `name=value` pairs sorted by name, then value, joined with `&`. */
export function canonicalQuery(params: readonly (readonly [string, string])[]): string {
  return params
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&')
}

export interface SigningScope {
  readonly credentials: AwsCredentials
  readonly region: string
  readonly service: string
  /** Signing time, ms since the epoch (whole seconds are used). */
  readonly time: number
}

export interface SignedParts {
  readonly canonicalRequest: string
  readonly stringToSign: string
  readonly signature: string
}

function sign(
  scope: SigningScope,
  method: string,
  canonicalPath: string,
  query: string,
  headers: ReadonlyMap<string, string>,
  payloadHash: string,
): SignedParts {
  const names = [...headers.keys()].sort()
  const canonicalHeaders = names.map((n) => `${n}:${headers.get(n)!.trim().replace(/ +/g, ' ')}\n`).join('')
  const canonicalRequest = [method, canonicalPath, query, canonicalHeaders, names.join(';'), payloadHash].join('\n')
  const date = amzDate(scope.time)
  const credentialScope = `${date.slice(0, 8)}/${scope.region}/${scope.service}/aws4_request`
  const stringToSign = [ALGORITHM, date, credentialScope, sha256Hex(canonicalRequest)].join('\n')
  const key = signingKey(scope.credentials.secretAccessKey, date.slice(0, 8), scope.region, scope.service)
  return { canonicalRequest, stringToSign, signature: createHmac('sha256', key).update(stringToSign).digest('hex') }
}

export interface HeaderSigningInput extends SigningScope {
  readonly method: string
  /** The URI-encoded path, e.g. `/test%24file.text` (S3 encodes object keys once). */
  readonly canonicalPath: string
  readonly query?: readonly (readonly [string, string])[]
  /** Headers to sign; must include `host`. */
  readonly headers: Readonly<Record<string, string>>
  /** Hex SHA-256 of the body (EMPTY_SHA256 for none), or UNSIGNED_PAYLOAD. */
  readonly payloadHash: string
}

/** Signs a request in the Authorization header; returns every header to send (host included). */
export function signHeaders(input: HeaderSigningInput): SignedParts & { readonly headers: Record<string, string> } {
  const headers = new Map(Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]))
  if (!headers.has('host')) throw new Error('SigV4: the host header must be signed')
  headers.set('x-amz-date', amzDate(input.time))
  headers.set('x-amz-content-sha256', input.payloadHash)
  if (input.credentials.sessionToken) headers.set('x-amz-security-token', input.credentials.sessionToken)
  const parts = sign(input, input.method, input.canonicalPath, canonicalQuery(input.query ?? []), headers, input.payloadHash)
  const date = amzDate(input.time).slice(0, 8)
  const authorization = `${ALGORITHM} Credential=${input.credentials.accessKeyId}/${date}/${input.region}/${input.service}/aws4_request,SignedHeaders=${[...headers.keys()].sort().join(';')},Signature=${parts.signature}`
  return { ...parts, headers: { ...Object.fromEntries(headers), authorization } }
}

export interface PresignInput extends SigningScope {
  readonly method: string
  /** scheme://host[:port] the URL points at; its host (with a non-default port) is signed. */
  readonly origin: string
  readonly canonicalPath: string
  /** Seconds the URL is valid (S3 allows 1 to 604800). */
  readonly expiresSeconds: number
  /** Extra query parameters, e.g. `response-content-disposition`. */
  readonly query?: readonly (readonly [string, string])[]
}

/** A presigned URL (query-string authentication, UNSIGNED-PAYLOAD, only `host` signed). */
export function presignUrl(input: PresignInput): string {
  if (!Number.isInteger(input.expiresSeconds) || input.expiresSeconds < 1 || input.expiresSeconds > 604_800)
    throw new Error('SigV4: expiry must be 1 to 604800 seconds')
  const date = amzDate(input.time)
  const params: (readonly [string, string])[] = [
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${input.credentials.accessKeyId}/${date.slice(0, 8)}/${input.region}/${input.service}/aws4_request`],
    ['X-Amz-Date', date],
    ['X-Amz-Expires', String(input.expiresSeconds)],
    ['X-Amz-SignedHeaders', 'host'],
    ...(input.credentials.sessionToken ? [['X-Amz-Security-Token', input.credentials.sessionToken] as const] : []),
    ...(input.query ?? []),
  ]
  const query = canonicalQuery(params)
  const { signature } = sign(
    input,
    input.method,
    input.canonicalPath,
    query,
    new Map([['host', new URL(input.origin).host]]),
    UNSIGNED_PAYLOAD,
  )
  return `${input.origin}${input.canonicalPath}?${query}&X-Amz-Signature=${signature}`
}
