/**
 * @module
 * The size of a plan once every shared subtree is counted where it is used: what `let` and
 * `union` expansion make the evaluator run. `let t1 = union t0, t0; let t2 = union t1, t1; ...`
 * binds to a small graph but runs 2^N leaves, so the engine refuses plans above
 * MAX_PLAN_OPERATORS at compile time (issue 15 item 4) instead of running until the time cap.
 */

import type { PlanNode } from './plan.js'
import { childNodes, expressionSubplans, nodeExpressions } from './plan-walk.js'

/** Most operators a query may expand to (a dashboard query has tens; generated unions hundreds). */
export const MAX_PLAN_OPERATORS = 10_000

/** Operators the plan runs, counting a shared subtree once per use (materialize once per run). */
export function expandedPlanSize(root: PlanNode): number {
  const memo = new Map<PlanNode, number>()
  const materialized = new Set<PlanNode>()
  const size = (node: PlanNode): number => {
    // materialize runs its input once per query, however often it is used
    if (node.kind === 'Materialize') {
      if (materialized.has(node)) return 1
      materialized.add(node)
    }
    const known = memo.get(node)
    if (known !== undefined) return known
    memo.set(node, 1) // a cycle cannot occur in a plan; this only guards the walk
    let n = 1
    for (const child of childNodes(node)) n += size(child)
    for (const e of nodeExpressions(node)) for (const sub of expressionSubplans(e)) n += size(sub)
    memo.set(node, n)
    return n
  }
  return size(root)
}
