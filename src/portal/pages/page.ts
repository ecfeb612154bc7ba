/**
 * @module
 * Shared page helpers: wrap content in the shell.
 */
import type { Html } from '../html.js'
import { type NavKey, renderLayout } from '../layout.js'
import type { PortalContext, PortalResult } from '../portal-route.js'

export function pageOf(
  ctx: PortalContext,
  title: string,
  active: NavKey | undefined,
  body: Html,
  status = 200,
  extraHead: Html | undefined = undefined,
): PortalResult {
  return {
    status,
    page: renderLayout({
      title,
      active,
      session: ctx.session,
      workspaces: ctx.workspaces,
      body,
      version: ctx.deps.version,
      ...(extraHead ? { extraHead } : {}),
    }),
  }
}
