/**
 * @module
 * The sign-in form. It carries a one-time nonce that must match the sign-in cookie, so another
 * site cannot sign a browser in to an account of its choosing (login CSRF).
 */
import { type Html, html } from '../html.js'
import { renderBarePage } from '../layout.js'

export interface SignInView {
  readonly nonce: string
  readonly next: string
  readonly accountName?: string
  /** An error (wrong password, throttled, expired form). */
  readonly error?: string
  /** A neutral notice (signed out, session ended). */
  readonly notice?: string
}

export function renderSignIn(view: SignInView): Html {
  const errorId = view.error ? 'signin-error' : undefined
  return renderBarePage(
    'Sign in',
    html`<div class="signin">
<h1><span class="brand-mark" aria-hidden="true"></span>Sign in to Provenant</h1>
${view.notice ? html`<div class="alert info" role="status"><p>${view.notice}</p></div>` : ''}
${view.error ? html`<div class="alert error" role="alert" id="signin-error"><p>${view.error}</p></div>` : ''}
<form method="post" action="/portal/sign-in" class="stack"${errorId ? html` aria-describedby="${errorId}"` : ''}>
  <input type="hidden" name="_csrf" value="${view.nonce}">
  <input type="hidden" name="next" value="${view.next}">
  <div>
    <label for="account">Account name</label>
    <input id="account" name="account" type="text" autocomplete="username" required${view.accountName ? '' : html` autofocus`} value="${view.accountName ?? ''}" spellcheck="false" autocapitalize="none">
  </div>
  <div>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${view.accountName ? html` autofocus` : ''}>
  </div>
  <button type="submit">Sign in</button>
</form>
<p class="muted">No account or a forgotten password? An operator sets one with <code>provenant account set-password</code>.</p>
</div>`,
  )
}
