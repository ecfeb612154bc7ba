/**
 * @module
 * The portal under /portal/ (issue 9): a sibling encapsulated Fastify context of /oi-api with its
 * own session handling, CSRF checks, security headers, HTML error pages and assets. Sessions are
 * cookies naming a server-side session (HttpOnly, SameSite=Strict, Secure when the public URL is
 * https); the portal never reads a bearer token, from the URL or anywhere else.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { roleHas } from '../domain/access/index.js'
import { DomainError, HTTP_STATUS, InvalidInputError } from '../domain/errors.js'
import type { PortalSession } from '../domain/sessions/index.js'
import { scrub } from '../shared/secret-scrubber.js'
import { parseCookies, serializeCookie } from './cookies.js'
import { exploreAssets } from './explore-bundle.js'
import { type Html, html } from './html.js'
import { renderBarePage, renderLayout } from './layout.js'
import { activityRoutes } from './pages/activity-page.js'
import { apiKeyRoutes } from './pages/api-keys-page.js'
import { connectionRoutes } from './pages/connections-page.js'
import { correctionRoutes } from './pages/corrections-page.js'
import { exploreRoutes } from './pages/explore-page.js'
import { overviewRoutes } from './pages/overview-page.js'
import { proposalRoutes } from './pages/proposals-page.js'
import { renderSignIn } from './pages/sign-in-page.js'
import { warmQueryRoutes } from './pages/warm-queries-page.js'
import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js'
import type { PortalContext, PortalDeps, PortalResult, PortalRoute } from './portal-route.js'
import { SECURITY_HEADERS } from './security-headers.js'

const TITLES: Readonly<Record<number, string>> = {
  400: 'That did not work',
  403: 'Not allowed',
  404: 'Not found',
  429: 'Too many attempts',
  503: 'Not available',
}

/** The sign-in form's nonce lives this long (a form left open longer is shown again). */
const SIGN_IN_NONCE_SECONDS = 3600

/** Routes every page module contributes; the second pass adds its pages here. */
function pageRoutes(): PortalRoute[] {
  return [
    ...overviewRoutes(),
    ...warmQueryRoutes(),
    ...exploreRoutes(),
    ...apiKeyRoutes(),
    ...proposalRoutes(),
    ...correctionRoutes(),
    ...activityRoutes(),
    ...connectionRoutes(),
  ]
}

/** A local path under /portal to return to after sign-in; anything else (other hosts, //x) is refused. */
export function safeNext(next: string | null | undefined): string {
  if (!next || !/^\/portal(\/|$|\?)/.test(next) || next.includes('\\') || next.includes('//') || next.length > 2000) return '/portal/'
  // Only printable ASCII (a CR or LF in a Location header was a 500), and no dot segments, which a
  // browser resolves out of /portal.
  if (!/^[\x21-\x7e]*$/.test(next) || /\/\.\.?(\/|$|\?|#)|%2e/i.test(next)) return '/portal/'
  return next
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function equalSecrets(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== 'string' || typeof b !== 'string' || a === '') return false
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function registerPortal(app: FastifyInstance, deps: PortalDeps): Promise<void> {
  const { services } = deps
  const secure = deps.publicUrl.startsWith('https:')
  const publicOrigin = new URL(deps.publicUrl).origin
  const SESSION_COOKIE = secure ? '__Secure-provenant_session' : 'provenant_session'
  const SIGN_IN_COOKIE = secure ? '__Secure-provenant_signin' : 'provenant_signin'
  const cookie = (name: string, value: string, maxAge?: number) =>
    serializeCookie(name, value, { path: '/portal', secure, ...(maxAge !== undefined ? { maxAge } : {}) })
  const sessions = new WeakMap<FastifyRequest, { secret: string | undefined; session: PortalSession | undefined }>()

  /** Port 0 means "any free port": the configured URL cannot name it, the request's own origin can. */
  function shownPublicUrl(request: FastifyRequest): string {
    return new URL(deps.publicUrl).port === '0' ? `${request.protocol}://${request.host}` : deps.publicUrl
  }

  function sendPage(reply: FastifyReply, status: number, page: Html): FastifyReply {
    return reply.code(status).type('text/html; charset=utf-8').send(page.text)
  }

  /**
   * A POST must come from a portal page: the browser's own Origin / Sec-Fetch-Site say so (a
   * second line behind SameSite=Strict cookies and the synchronizer token).
   */
  function crossSite(request: FastifyRequest): boolean {
    const site = request.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return true
    const origin = request.headers.origin
    if (origin === undefined) return false
    const own = `${request.protocol}://${request.headers.host ?? ''}`
    return origin !== own && origin !== publicOrigin
  }

  async function errorPage(request: FastifyRequest, status: number, message: string): Promise<Html> {
    const session = sessions.get(request)?.session
    const title = TITLES[status] ?? 'Something went wrong'
    const body = html`<h1>${title}</h1><div class="alert ${status >= 500 ? 'error' : 'warn'}" role="alert"><p>${message}</p></div>
<p><a href="/portal/">Back to the overview</a></p>`
    if (!session) return renderBarePage(title, html`<div class="signin">${body}</div>`)
    const workspaces = await services.sessions.membershipsOf(session.account.id).catch(() => [])
    return renderLayout({ title, active: undefined, session, workspaces, body, version: deps.version })
  }

  function signInRedirect(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const hadCookie = sessions.get(request)?.secret !== undefined
    const next = request.method === 'GET' ? safeNext(request.url) : '/portal/'
    const query = new URLSearchParams({ next })
    if (hadCookie) query.set('ended', '1')
    return reply.redirect(`/portal/sign-in?${query}`, 303)
  }

  function signInPage(
    reply: FastifyReply,
    status: number,
    view: { next: string; accountName?: string; error?: string; notice?: string },
  ): FastifyReply {
    const nonce = randomBytes(24).toString('base64url')
    reply.header('set-cookie', cookie(SIGN_IN_COOKIE, nonce, SIGN_IN_NONCE_SECONDS))
    return sendPage(reply, status, renderSignIn({ nonce, ...view }))
  }

  await app.register(
    async (portal) => {
      portal.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'buffer', bodyLimit: 64 * 1024 },
        (_request, raw, done) => {
          // Strict UTF-8, raw or percent-encoded (URLSearchParams would quietly turn bad bytes into
          // U+FFFD), and no field holds U+0000 (PostgreSQL text cannot): refused like the API does.
          let body: string
          try {
            body = new TextDecoder('utf-8', { fatal: true }).decode(raw as Buffer)
            for (const part of body.split('&')) decodeURIComponent(part.replace(/\+/g, ' '))
          } catch {
            return done(new InvalidInputError('the form is not valid UTF-8'))
          }
          if (/%00|\u0000/.test(body)) return done(new InvalidInputError('a form field may not contain the NUL character'))
          done(null, new URLSearchParams(body))
        },
      )

      portal.addHook('onRequest', async (request, reply) => {
        for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value)
        reply.header('cache-control', 'no-store')
        // As on the API: a NUL in the URL reaches no handler (it was a 500 on PostgreSQL).
        if (/%00/.test(request.url))
          return sendPage(reply, 400, await errorPage(request, 400, 'The address may not contain the NUL character (%00).'))
        // Assets need no session: skip the database read for them.
        if (request.url.startsWith('/portal/assets/')) return
        const secret = parseCookies(request.headers.cookie).get(SESSION_COOKIE)
        sessions.set(request, { secret, session: secret ? await services.sessions.resolve(secret) : undefined })
      })

      portal.setNotFoundHandler(async (request, reply) =>
        sendPage(reply, 404, await errorPage(request, 404, `There is no portal page at ${request.url.split('?')[0]}.`)),
      )

      portal.setErrorHandler(async (error, request, reply) => {
        if (error instanceof DomainError) {
          if (error.kind === 'unauthenticated') return signInRedirect(request, reply)
          const status = HTTP_STATUS[error.kind]
          return sendPage(reply, status, await errorPage(request, status, scrub(error.message)))
        }
        const status = (error as { statusCode?: number }).statusCode
        if (status !== undefined && status >= 400 && status < 500) {
          return sendPage(
            reply,
            400,
            await errorPage(request, 400, 'The request could not be read. Go back, reload the page and try again.'),
          )
        }
        request.log.error({ err: error }, 'portal error')
        return sendPage(
          reply,
          500,
          await errorPage(
            request,
            500,
            `Something went wrong on the server. The server log has the details under correlation id ${request.id}.`,
          ),
        )
      })

      portal.get('/assets/:name', async (request, reply) => {
        const { name } = request.params as { name: string }
        const explore = name.startsWith('explore.') ? await exploreAssets() : undefined
        const asset = [PORTAL_CSS, PORTAL_JS, ...(explore ? [explore.js, explore.css] : [])].find((a) => a.name === name)
        if (!asset) return sendPage(reply, 404, await errorPage(request, 404, 'No such asset.'))
        return reply
          .header('cache-control', 'public, max-age=31536000, immutable')
          .type(name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8')
          .send(asset.body)
      })

      portal.get('/sign-in', async (request, reply) => {
        const query = new URLSearchParams(request.url.split('?')[1] ?? '')
        const next = safeNext(query.get('next'))
        if (sessions.get(request)?.session) return reply.redirect(next, 303)
        const notice =
          query.get('signed-out') === '1'
            ? 'You are signed out.'
            : query.get('ended') === '1'
              ? 'Your session ended. Please sign in again.'
              : undefined
        return signInPage(reply, 200, { next, ...(notice ? { notice } : {}) })
      })

      portal.post('/sign-in', async (request, reply) => {
        const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams()
        const next = safeNext(form.get('next'))
        const accountName = (form.get('account') ?? '').slice(0, 200)
        const nonce = parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE)
        if (crossSite(request) || !equalSecrets(nonce, form.get('_csrf') ?? undefined)) {
          return signInPage(reply, 403, {
            next,
            accountName,
            error: 'This sign-in form expired or did not come from the portal. Please sign in again.',
          })
        }
        if (accountName.trim() === '' || (form.get('password') ?? '') === '') {
          return signInPage(reply, 400, { next, accountName, error: 'Enter your account name and password.' })
        }
        const outcome = await services.sessions.signIn({
          accountName,
          password: form.get('password') ?? '',
          clientAddress: request.ip,
          userAgent: String(request.headers['user-agent'] ?? ''),
          replacing: sessions.get(request)?.secret,
        })
        switch (outcome.outcome) {
          case 'signed-in':
            reply.header('set-cookie', [cookie(SESSION_COOKIE, outcome.secret), cookie(SIGN_IN_COOKIE, '', 0)])
            return reply.redirect(next, 303)
          case 'refused':
            return signInPage(reply, outcome.reason === 'no-workspace' ? 403 : 401, {
              next,
              accountName,
              error:
                outcome.reason === 'no-workspace'
                  ? 'This account is not a member of any workspace yet. Ask an administrator to add it.'
                  : 'The account name or password is not right.',
            })
          case 'throttled': {
            const minutes = Math.ceil(outcome.retryAfterMs / 60_000)
            reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)))
            return signInPage(reply, 429, {
              next,
              accountName,
              error: `Too many failed sign-ins ${outcome.limitedBy === 'account' ? 'for this account' : 'from your address'}. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
            })
          }
        }
      })

      /** Sign-in, CSRF and rights, in that order, then the handler. */
      function guarded(route: Pick<PortalRoute, 'method' | 'rights'>, handler: (ctx: PortalContext) => Promise<PortalResult>) {
        return async (request: FastifyRequest, reply: FastifyReply) => {
          const state = sessions.get(request)
          const session = state?.session
          if (!session || !state.secret) return signInRedirect(request, reply)
          const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams()
          // Forms send the CSRF token as a field; the Explore page's script (JSON) as a header.
          const csrf = form.get('_csrf') ?? headerValue(request.headers['x-csrf-token'])
          if (route.method === 'POST' && (crossSite(request) || !services.sessions.csrfMatches(session, csrf))) {
            return sendPage(
              reply,
              403,
              await errorPage(
                request,
                403,
                'This form expired or did not come from a portal page, so nothing was changed. Reload the page and try again.',
              ),
            )
          }
          const missing = route.rights.filter((r) => !roleHas(session.role, r))
          if (missing.length > 0) {
            return sendPage(
              reply,
              403,
              await errorPage(request, 403, `Your role (${session.role}) does not include ${missing.join(', ')}, which this page needs.`),
            )
          }
          const ctx: PortalContext = {
            deps,
            request,
            reply,
            session,
            caller: services.sessions.callerOf(session),
            workspaces: await services.sessions.membershipsOf(session.account.id),
            params: (request.params ?? {}) as Record<string, string>,
            query: new URLSearchParams(request.url.split('?')[1] ?? ''),
            form,
            publicUrl: shownPublicUrl(request),
            now: services.clock.now(),
          }
          const outcome = await handler(ctx)
          if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303)
          if ('json' in outcome)
            return reply
              .code(outcome.status ?? 200)
              .type('application/json; charset=utf-8')
              .send(outcome.json)
          if ('download' in outcome) {
            return reply
              .type(outcome.contentType)
              .header('content-disposition', `attachment; filename="${outcome.fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
              .send(outcome.download)
          }
          return sendPage(reply, outcome.status ?? 200, outcome.page)
        }
      }

      portal.post(
        '/sign-out',
        guarded({ method: 'POST', rights: [] }, async (ctx) => {
          const secret = sessions.get(ctx.request)!.secret!
          await services.sessions.signOut(secret, ctx.session, {
            everywhere: ctx.form.get('everywhere') === '1',
            clientAddress: ctx.request.ip,
          })
          ctx.reply.header('set-cookie', cookie(SESSION_COOKIE, '', 0))
          return { redirect: '/portal/sign-in?signed-out=1' }
        }),
      )

      portal.post(
        '/workspace',
        guarded({ method: 'POST', rights: [] }, async (ctx) => {
          await services.sessions.switchWorkspace(sessions.get(ctx.request)!.secret!, ctx.session, ctx.form.get('workspace') ?? '')
          return { redirect: '/portal/' }
        }),
      )

      for (const route of pageRoutes()) {
        portal.route({ method: route.method, url: route.path, handler: guarded(route, route.handler) })
      }
    },
    { prefix: '/portal' },
  )
}
