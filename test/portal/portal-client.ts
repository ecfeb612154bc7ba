/**
 * @module
 * A minimal browser-like HTTP client for portal tests over real HTTP: a cookie jar (the session and
 * sign-in cookies), redirects left visible, and the CSRF token taken from the last page, so tests
 * can also forge what a browser would not send.
 */
import type { TestServer } from '../support/test-server.js'

export interface PortalResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly location: string | null
}

export class PortalClient {
  readonly cookies = new Map<string, string>()
  /** The `_csrf` value of the last page that had a form. */
  csrf: string | undefined

  constructor(readonly baseUrl: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  private async send(
    method: string,
    path: string,
    init: { form?: Record<string, string | string[]>; headers?: Record<string, string> } = {},
  ): Promise<PortalResponse> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) }
    if (this.cookies.size) headers['cookie'] = this.cookieHeader()
    let body: string | undefined
    if (init.form) {
      const params = new URLSearchParams()
      for (const [k, v] of Object.entries(init.form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one)
      body = params.toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) })
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const text = await response.text()
    const csrf = /name="_csrf" value="([^"]+)"/.exec(text)
    if (csrf) this.csrf = csrf[1]
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') }
  }

  get(path: string, headers?: Record<string, string>): Promise<PortalResponse> {
    return this.send('GET', path, headers ? { headers } : {})
  }

  /** POSTs a form with the current CSRF token unless `_csrf` is given (or set to undefined via omitCsrf). */
  post(
    path: string,
    form: Record<string, string | string[]>,
    options: { omitCsrf?: boolean; headers?: Record<string, string> } = {},
  ): Promise<PortalResponse> {
    const withToken = options.omitCsrf || '_csrf' in form ? form : { ...form, _csrf: this.csrf ?? '' }
    return this.send('POST', path, { form: withToken, ...(options.headers ? { headers: options.headers } : {}) })
  }

  /** Opens the sign-in form and submits it; returns the POST's response (303 on success). */
  async signIn(account: string, password: string, next?: string): Promise<PortalResponse> {
    await this.get('/portal/sign-in')
    return this.post('/portal/sign-in', { account, password, ...(next ? { next } : {}) })
  }
}

export const PASSWORD = (role: string) => `${role}-password-123`

/** A client signed in as the test account of a role (`viewer@acme`, …). */
export async function signedIn(server: TestServer, role: string): Promise<PortalClient> {
  const client = new PortalClient(server.baseUrl)
  const response = await client.signIn(`${role}@${server.workspace.name}`, PASSWORD(role))
  if (response.status !== 303) throw new Error(`sign-in as ${role} failed: ${response.status} ${response.text.slice(0, 300)}`)
  await client.get('/portal/')
  return client
}
