/**
 * @module
 * The portal's stylesheet and script, kept as TypeScript strings so they ship inside the build
 * (tsc copies no other files) and are served by the process itself: no CDN, nothing external.
 * Each is served under a content-hashed name, so browsers may cache it for good.
 */
import { createHash } from 'node:crypto'

const CSS = `
:root {
  --ink: #1b1f24; --muted: #4a525c; --line: #d6d9de; --bg: #f5f6f8; --panel: #ffffff;
  --brand: #0b5cad; --brand-dark: #084a8c; --danger: #b3261e; --ok: #1e6b34; --warn: #8a5a00;
  --focus: #f0a500; --header: #17263a;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 16px; line-height: 1.5; color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; }
a { color: var(--brand); }
a:hover { color: var(--brand-dark); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link { position: absolute; left: -9999px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 10; }
.skip-link:focus { left: .5rem; top: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

.topbar { background: var(--header); color: #fff; display: flex; align-items: center; gap: 1.25rem; padding: .6rem 1.5rem; flex-wrap: wrap; }
.topbar a { color: #fff; }
.brand { font-weight: 700; font-size: 1.15rem; letter-spacing: .02em; text-decoration: none; display: flex; align-items: center; gap: .5rem; }
.brand-mark { display: inline-block; width: 1.4rem; height: 1.4rem; border-radius: .3rem; background: linear-gradient(135deg, #4da3ff, #0b5cad); }
.topbar .spacer { flex: 1; }
.who { font-size: .95rem; color: #dfe6ee; }
.who strong { color: #fff; }
.role-badge { display: inline-block; border: 1px solid #9fb3c8; border-radius: 1rem; padding: 0 .55rem; font-size: .8rem; margin-left: .35rem; color: #fff; }
.topbar form { margin: 0; display: flex; align-items: center; gap: .4rem; }
.topbar select { font: inherit; font-size: .9rem; padding: .2rem .3rem; border-radius: .3rem; }
.topbar label { font-size: .9rem; color: #dfe6ee; }
.btn-quiet { background: transparent; color: #fff; border: 1px solid #9fb3c8; border-radius: .35rem; padding: .3rem .8rem; font: inherit; font-size: .9rem; cursor: pointer; }
.btn-quiet:hover { background: rgba(255,255,255,.1); }

.frame { display: flex; flex: 1; }
.sidenav { width: 15rem; flex: none; background: var(--panel); border-right: 1px solid var(--line); padding: 1rem 0; }
.sidenav ul { list-style: none; margin: 0; padding: 0; }
.sidenav a { display: block; padding: .55rem 1.5rem; color: var(--ink); text-decoration: none; border-left: 4px solid transparent; }
.sidenav a:hover { background: #eef3f9; }
.sidenav a[aria-current="page"] { border-left-color: var(--brand); background: #e8f0fa; font-weight: 600; color: var(--brand-dark); }
main { flex: 1; padding: 1.5rem 2rem 3rem; max-width: 78rem; min-width: 0; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 1.75rem 0 .5rem; }
.lead { color: var(--muted); margin: 0 0 1.25rem; max-width: 60rem; }
.muted { color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: .5rem; padding: 1.1rem 1.25rem; margin: 1rem 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); gap: 1rem; margin-top: 1rem; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.1rem; }
.card h2 { margin: 0 0 .35rem; font-size: 1.05rem; }
.card p { margin: 0; color: var(--muted); }

table { border-collapse: collapse; width: 100%; background: var(--panel); font-size: .95rem; }
th, td { text-align: left; padding: .5rem .65rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
tbody th { font-weight: 600; }
tbody tr:nth-child(even) { background: #fafbfc; }
/* position: relative keeps visually hidden text (absolute) inside the scroller: it pushed a phone's page sideways. */
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: .5rem; position: relative; }
.table-wrap table { border: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.coltype { display: block; font-weight: 400; font-size: .75rem; color: var(--muted); }
.null { color: var(--muted); font-style: italic; }

form.stack { display: grid; gap: 1rem; max-width: 44rem; }
label { font-weight: 600; display: block; margin-bottom: .25rem; }
.hint { font-weight: 400; color: var(--muted); font-size: .9rem; display: block; }
input[type="text"], input[type="password"], input:not([type]) { font: inherit; padding: .45rem .6rem; border: 1px solid #8a939e; border-radius: .35rem; width: 100%; max-width: 28rem; background: #fff; color: var(--ink); }
input[aria-invalid="true"] { border-color: var(--danger); border-width: 2px; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; padding: .6rem 1rem .8rem; margin: 0; }
legend { font-weight: 600; padding: 0 .3rem; }
fieldset > .hint { margin: 0 0 .5rem; }
.scope-group { margin: .25rem 0 .75rem; }
.scope-group-title { font-weight: 600; font-size: .95rem; margin: 0 0 .2rem; }
.choices { display: flex; flex-wrap: wrap; gap: .35rem 1.25rem; }
.choices label, .checks label { font-weight: 400; display: inline-flex; align-items: center; gap: .4rem; margin: 0; }
.checks { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .3rem 1rem; }
.custom-expiry { margin-top: .6rem; }
button, .button { font: inherit; border-radius: .35rem; padding: .45rem 1.1rem; cursor: pointer; border: 1px solid var(--brand); background: var(--brand); color: #fff; text-decoration: none; display: inline-block; }
button:hover, .button:hover { background: var(--brand-dark); color: #fff; }
button.secondary { background: #fff; color: var(--brand); }
button.secondary:hover { background: #eef3f9; color: var(--brand-dark); }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); padding: .25rem .75rem; font-size: .9rem; }
button.danger:hover { background: var(--danger); color: #fff; }
button.small { padding: .2rem .7rem; font-size: .9rem; }

.alert { border-radius: .45rem; padding: .8rem 1rem; margin: 1rem 0; border: 1px solid; border-left-width: 6px; }
.alert h2 { margin-top: 0; font-size: 1.1rem; }
.alert p { margin: .3rem 0; }
.alert.error { background: #fdeceb; border-color: var(--danger); }
.alert.success { background: #e9f5ec; border-color: var(--ok); }
.alert.info { background: #eaf2fb; border-color: var(--brand); }
.alert.warn { background: #fff6e0; border-color: var(--warn); }
.copy-row { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
.copy-row input { max-width: none; flex: 1; min-width: 18rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }

.badge { display: inline-block; border-radius: 1rem; padding: .05rem .6rem; font-size: .8rem; font-weight: 600; border: 1px solid; }
.badge.active { color: var(--ok); border-color: var(--ok); background: #e9f5ec; }
.badge.expired { color: var(--muted); border-color: #8a939e; background: #f0f1f3; }
.badge.revoked { color: var(--danger); border-color: var(--danger); background: #fdeceb; }
.chips { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; padding: 0; margin: .3rem 0 0; }
/* API keys: "14 rights" and each right stay whole; the list wraps between rights only. */
td.rights summary { white-space: nowrap; }
.chips li { white-space: nowrap; background: #eef1f5; border-radius: .25rem; padding: 0 .4rem; font-size: .8rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
details summary { cursor: pointer; color: var(--brand); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.25rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { background: #eef1f5; padding: 0 .25rem; border-radius: .2rem; font-size: .9em; }
pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: .45rem; padding: .9rem 1rem; overflow-x: auto; font-size: .92rem; line-height: 1.45; margin: .5rem 0 1rem; }
pre code { background: none; padding: 0; }
.k-kw { color: #7a1fa2; font-weight: 600; }
.k-fn { color: #0550ae; }
.k-str { color: #0a6b2d; }
.k-num { color: #953800; }
.k-cmt { color: #5b636d; font-style: italic; }
.k-pipe { color: #b3261e; font-weight: 700; }
.k-op { color: #3d434b; }

.chart { margin: 1rem 0; background: var(--panel); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
.chart-svg { width: 100%; max-width: 52rem; height: auto; display: block; }
.chart-legend { list-style: none; display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; padding: 0; margin: .4rem 0 0; font-size: .9rem; }
.swatch { display: inline-block; width: 1.1rem; height: .3rem; border-radius: .15rem; margin-right: .35rem; vertical-align: middle; }
.swatch-0 { background: #0072B2; } .swatch-1 { background: #D55E00; } .swatch-2 { background: #009E73; } .swatch-3 { background: #CC79A7; }
.swatch-4 { background: #B8860B; } .swatch-5 { background: #6A3D9A; } .swatch-6 { background: #000000; } .swatch-7 { background: #8B4513; }

.signin { max-width: 26rem; margin: 8vh auto 2rem; background: var(--panel); border: 1px solid var(--line); border-radius: .6rem; padding: 2rem 2rem 1.5rem; }
.signin h1 { margin-bottom: 1rem; display: flex; align-items: center; gap: .6rem; }
.signin input { max-width: none; }
.signin button { width: 100%; margin-top: .5rem; }
.inline-form { display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; margin: 0 0 1rem; }
.count { display: inline-block; min-width: 1.6rem; text-align: center; background: #e3e8ef; border-radius: 1rem; padding: 0 .5rem; font-size: .85rem; font-weight: 600; margin-left: .35rem; vertical-align: middle; }
.small { font-size: .85rem; }
h3 { font-size: 1.08rem; margin: 0 0 .3rem; }
h4 { font-size: .95rem; margin: .9rem 0 .3rem; }
textarea { font: inherit; padding: .45rem .6rem; border: 1px solid #8a939e; border-radius: .35rem; width: 100%; max-width: 40rem; background: #fff; color: var(--ink); }
select { font: inherit; padding: .4rem .5rem; border: 1px solid #8a939e; border-radius: .35rem; background: #fff; color: var(--ink); }
input[type="date"] { font: inherit; padding: .35rem .5rem; border: 1px solid #8a939e; border-radius: .35rem; }
.proposal, .correction { max-width: 60rem; }
/* The proposal a link (the MCP reviewUrl) points at. */
.proposal.focused { border: 2px solid var(--brand); box-shadow: 0 0 0 4px #dbe8f6; }
.decision { margin: .3rem 0 .6rem; }
.rationale { margin: 0; padding: .5rem .9rem; border-left: 4px solid #9fb3c8; background: #f6f8fb; white-space: pre-wrap; }
pre.diff { background: #fbfcfd; }
.diff-head { font-weight: 700; color: var(--ink); }
.diff-add { color: #0a5a24; background: #e6f4ea; display: inline-block; width: 100%; }
.diff-del { color: #8e1c15; background: #fcebea; display: inline-block; width: 100%; }
.diff-same { color: var(--muted); }
.review { border-top: 1px solid var(--line); margin-top: 1rem; padding-top: .75rem; display: grid; gap: .75rem; }
.review .inline-form { margin: 0; }
.reject-form { gap: .5rem; }
.explain { margin: 0; }
.badge.open, .badge.pending { color: #7a4b00; border-color: var(--warn); background: #fff6e0; }
.badge.accepted, .badge.applied { color: var(--ok); border-color: var(--ok); background: #e9f5ec; }
.badge.rejected { color: var(--danger); border-color: var(--danger); background: #fdeceb; }
.badge.superseded { color: var(--muted); border-color: #8a939e; background: #f0f1f3; }
table.before-after { width: auto; min-width: 24rem; margin: .75rem 0; border: 1px solid var(--line); }
table.before-after td.was { background: #fcebea; }
table.before-after td.now { background: #e6f4ea; }
.signature { margin: .5rem 0 0; padding: .4rem .7rem; background: #f3f6fa; border-radius: .35rem; border: 1px dashed #9fb3c8; }
.sign-form { border-top: 1px solid var(--line); margin-top: 1rem; padding-top: .5rem; gap: .6rem; }
.sign-form h4 { margin: .2rem 0 0; }
.button-row { display: flex; gap: .75rem; flex-wrap: wrap; }
.sign-form button.danger { padding: .45rem 1.1rem; font-size: 1rem; }
.nowrap { white-space: nowrap; }
.badge.state-running { color: var(--ok); border-color: var(--ok); background: #e9f5ec; }
.badge.state-starting, .badge.state-backoff { color: #7a4b00; border-color: var(--warn); background: #fff6e0; }
.badge.state-failed { color: var(--danger); border-color: var(--danger); background: #fdeceb; }
.badge.state-stopped { color: var(--muted); border-color: #8a939e; background: #f0f1f3; }
.error-text { color: var(--danger); font-size: .9rem; word-break: break-word; }
.credential-forms { display: grid; grid-template-columns: repeat(auto-fill, minmax(26rem, 1fr)); gap: 1rem; }
.credentials { margin: 0; }
.credentials p { margin: .2rem 0 .6rem; }
table.cred-rows { width: 100%; background: none; margin-bottom: .6rem; }
table.cred-rows th, table.cred-rows td { border: 0; padding: .2rem .3rem .2rem 0; background: none; }
table.cred-rows thead th { background: none; font-size: .85rem; }
table.cred-rows input { max-width: none; }
.clear-form { margin: .6rem 0 0; }
tr.broken, tbody tr.broken:nth-child(even) { background: #fdeceb; box-shadow: inset 4px 0 0 var(--danger); }
.filters { width: fit-content; max-width: 100%; display: flex; flex-wrap: wrap; gap: .75rem 1rem; align-items: flex-end; background: var(--panel); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: 1rem 0; }
.filters label { font-size: .9rem; }
.filters input[type="text"] { width: 11rem; }
.log-actions { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: flex-end; justify-content: space-between; margin: .5rem 0 1rem; }
.verify-form { margin: 0; align-items: flex-end; }
.verify-form label { margin: 0; }
.verify-form input[type="text"] { width: 10rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.export-links { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
.export-title { font-weight: 600; }
a.secondary-link { background: #fff; color: var(--brand); }
a.secondary-link:hover { background: #eef3f9; color: var(--brand-dark); }
.verdict dl.facts { margin: .5rem 0; }
.verdict-fields dt { white-space: nowrap; }
/*
 * Activity log (issue 18): fixed column widths so no column starves another. The Action cell
 * wraps after each slash of a route, and anywhere as a last resort; Details takes the rest of the
 * width, shows one readable line (two at most) and opens in place. The page may use the whole
 * width of a wide screen. On a phone each record is a card (no sideways scrolling).
 */
main:has(table.activity-records) { max-width: 120rem; }
table.activity-records { table-layout: fixed; font-size: .9rem; }
table.activity-records th, table.activity-records td { padding: .4rem .5rem; overflow-wrap: anywhere; }
table.activity-records col.c-id { width: 7rem; }
table.activity-records col.c-time { width: 6.75rem; }
table.activity-records col.c-entity { width: 7.75rem; }
table.activity-records col.c-action { width: 10.25rem; }
table.activity-records col.c-user { width: 8.5rem; }
table.activity-records th.record-id { font-size: .8rem; font-weight: 600; }
table.activity-records .entity-id { font-size: .75rem; line-height: 1.3; }
table.activity-records time { display: block; line-height: 1.3; }
table.activity-records .clock { white-space: nowrap; }
td.details details summary { list-style: none; display: flex; gap: .35rem; align-items: baseline; color: var(--ink); font-size: .85rem; }
td.details details summary::-webkit-details-marker { display: none; }
td.details details summary::before { content: "▸"; color: var(--brand); flex: none; }
td.details details[open] summary::before { content: "▾"; }
.details-line { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden; }
td.details details[open] .details-line { -webkit-line-clamp: unset; }
pre.details-json { margin: .4rem 0; font-size: .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
td.details .digest { margin: 0; overflow-wrap: anywhere; }
@media (min-width: 1500px) {
  table.activity-records col.c-time { width: 13.5rem; }
  table.activity-records col.c-entity { width: 12rem; }
  table.activity-records col.c-action { width: 16rem; }
  table.activity-records col.c-user { width: 9rem; }
}
@media (max-width: 640px) {
  table.activity-records, table.activity-records tbody, table.activity-records th, table.activity-records td { display: block; }
  table.activity-records thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.activity-records tr { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 .75rem; padding: .45rem .5rem; border-bottom: 1px solid var(--line); }
  table.activity-records th, table.activity-records td { border: 0; padding: .1rem 0; }
  table.activity-records td.time { flex: 1 1 10rem; font-size: .8rem; }
  table.activity-records td.time time, table.activity-records td.time div { display: inline; }
  table.activity-records td.time div::before { content: " · "; }
  table.activity-records td.action { order: 1; font-weight: 600; }
  table.activity-records td.user { order: 2; flex: 1 1 auto; }
  table.activity-records td.user::before { content: "by "; color: var(--muted); }
  table.activity-records td.entity { order: 3; flex: 1 1 100%; font-size: .8rem; color: var(--muted); }
  table.activity-records td.entity .entity-id { display: inline; margin-left: .3rem; }
  table.activity-records td.details { order: 4; flex: 1 1 100%; }
}
.pager { display: flex; gap: 1.5rem; align-items: center; margin: 1rem 0; }
.api-help { max-width: 60rem; margin-top: 2rem; }
.api-help p { margin: .4rem 0; }
footer.page-foot { color: var(--muted); font-size: .85rem; padding: 0 2rem 1rem; text-align: right; }
@media (max-width: 900px) {
  .frame { flex-direction: column; }
  .sidenav { width: auto; border-right: 0; border-bottom: 1px solid var(--line); padding: .25rem 0; }
  .sidenav ul { display: flex; flex-wrap: wrap; }
  .sidenav a { border-left: 0; border-bottom: 3px solid transparent; padding: .4rem .8rem; }
  .sidenav a[aria-current="page"] { border-bottom-color: var(--brand); }
  main { padding: 1rem; }
}
`

// Progressive enhancement only: every page works without it.
const JS = `
(function () {
  'use strict'
  // Copy buttons: <button data-copy="input-id" hidden>. Revealed only when the clipboard is usable.
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'))
    var status = document.getElementById(button.getAttribute('data-status') || '')
    if (!target) return
    button.hidden = false
    button.addEventListener('click', function () {
      var text = target.value !== undefined ? target.value : target.textContent
      var done = function () { if (status) status.textContent = 'Copied to the clipboard.' }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { target.select(); document.execCommand('copy'); done() })
      } else {
        target.select(); document.execCommand('copy'); done()
      }
    })
  })
  // A token shown once: selecting it on focus makes manual copying easy too.
  document.querySelectorAll('input[data-select-on-focus]').forEach(function (input) {
    input.addEventListener('focus', function () { input.select() })
  })
  // The custom expiry field is used only with the "Custom" choice.
  var custom = document.getElementById('custom-expires')
  if (custom) {
    var radios = document.querySelectorAll('input[name="expires"]')
    var sync = function () {
      var chosen = document.querySelector('input[name="expires"]:checked')
      var on = chosen && chosen.value === 'custom'
      custom.disabled = !on
      custom.parentElement.classList.toggle('muted', !on)
      if (on && document.activeElement === chosen) custom.focus()
    }
    radios.forEach(function (r) { r.addEventListener('change', sync) })
    sync()
  }
  // The run button says it is working (queries can take a few seconds).
  document.querySelectorAll('form[data-busy-label]').forEach(function (form) {
    form.addEventListener('submit', function () {
      var button = form.querySelector('button[type="submit"]')
      if (button) { button.textContent = form.getAttribute('data-busy-label'); button.setAttribute('aria-disabled', 'true') }
    })
  })
})()
`

function hashed(name: string, ext: string, body: string): { readonly name: string; readonly body: string } {
  return { name: `${name}.${createHash('sha256').update(body).digest('hex').slice(0, 10)}.${ext}`, body }
}

export const PORTAL_CSS = hashed('portal', 'css', CSS)
export const PORTAL_JS = hashed('portal', 'js', JS)
