/**
 * @module
 * Corrections log, current shape (spec 4.6).
 */
import { z } from 'zod'
import type { Services } from '../../domain/services.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'

const reasonCategory = z.object({ id: z.string(), description: z.string().optional() })

export function correctionRoutes(services: Services): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/provenance/reason-categories',
      operationId: 'listReasonCategories',
      summary: 'The workspace-wide list of correction reason categories',
      description: 'The configurable list of reasons a correction may give (spec 2.9). Workspace-wide and unscoped: it takes no scopeKey.',
      tag: 'Corrections',
      rights: ['amendments:read'],
      responses: { 200: { description: 'The reason categories, in configured order.', schema: z.object({ reasonCategories: z.array(reasonCategory) }) } },
      handler: async ({ caller }) => {
        const { document } = await services.config.current(caller.workspaceId)
        return { reasonCategories: document.reasonCategories.map((c) => ({ id: c.id, ...(c.description ? { description: c.description } : {}) })) }
      },
    }),
  ]
}
