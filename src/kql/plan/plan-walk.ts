/**
 * @module
 * Walks over a plan: every node and every expression, including subqueries inside expressions
 * (toscalar, in) and mv-apply subqueries.
 */
import type { Expr, PlanNode } from './plan.js'

/** The direct child nodes of a plan node (not counting subqueries inside expressions). */
export function childNodes(node: PlanNode): PlanNode[] {
  switch (node.kind) {
    case 'TableScan':
    case 'Values':
    case 'Range':
    case 'ApplyInput':
      return []
    case 'Join':
      return [node.left, node.right]
    case 'Union':
      return [...node.inputs]
    case 'MvApply':
    case 'Partition':
      return [node.input, node.subquery]
    case 'SqlQuery':
      return [node.fallback]
    default:
      return [node.input]
  }
}

/** The expressions a node evaluates. */
export function nodeExpressions(node: PlanNode): Expr[] {
  switch (node.kind) {
    case 'Range':
      return [node.from, node.to, node.step]
    case 'Filter':
      return [node.predicate]
    case 'Project':
      return [...node.exprs]
    case 'Summarize':
      return [...node.keys, ...node.aggregates.flatMap((a) => a.args)]
    case 'Sort':
    case 'Top':
      return node.keys.map((k) => k.expr)
    case 'MvExpand':
      return node.items.map((i) => i.expr)
    case 'MvApply':
      return [...node.items]
    case 'Parse':
    case 'ParseKv':
      return [node.source]
    case 'MakeSeries': {
      const out: Expr[] = [...node.keys, node.axis, node.step, ...node.aggregates.flatMap((a) => a.args)]
      if (node.from) out.push(node.from)
      if (node.to) out.push(node.to)
      return out
    }
    case 'SampleDistinct':
      return [node.expr]
    case 'TopNested':
      return node.levels.flatMap((l) => [l.key, ...l.aggregate.args])
    case 'ScanPattern':
      return node.steps.flatMap((s) => [s.predicate, ...s.assignments.map((a) => a.expr)])
    case 'TopHitters':
      return node.weight ? [node.expr, node.weight] : [node.expr]
    case 'Pivot':
      return [...node.keys, node.pivot, ...node.aggregate.args]
    case 'Partition':
      return [node.key]
    default:
      return []
  }
}

/** Plans nested inside an expression (toscalar, in (T)). */
export function expressionSubplans(e: Expr): PlanNode[] {
  switch (e.kind) {
    case 'Literal':
    case 'ColumnRef':
      return []
    case 'ScalarSubquery':
      return [e.plan]
    case 'InSubquery':
      return [e.subquery, ...expressionSubplans(e.operand)]
    case 'Call':
    case 'Window':
      return e.args.flatMap(expressionSubplans)
    case 'Binary':
      return [...expressionSubplans(e.left), ...expressionSubplans(e.right)]
    case 'Unary':
    case 'Convert':
      return expressionSubplans(e.operand)
    case 'InList':
      return [...expressionSubplans(e.operand), ...e.items.flatMap(expressionSubplans)]
    case 'Between':
      return [e.operand, e.low, e.high].flatMap(expressionSubplans)
    case 'Member':
      return [...expressionSubplans(e.target), ...expressionSubplans(e.key)]
    case 'Pack':
      return e.entries.flatMap((x) => expressionSubplans(x.value))
  }
}

/** Visits every node reachable from `root` once (shared subtrees are visited once). */
export function visitPlan(root: PlanNode, visit: (node: PlanNode) => void): void {
  const seen = new Set<PlanNode>()
  const stack: PlanNode[] = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (seen.has(node)) continue
    seen.add(node)
    visit(node)
    for (const e of nodeExpressions(node)) stack.push(...expressionSubplans(e))
    stack.push(...childNodes(node).reverse())
  }
}

/** The workspace tables a plan reads, in first-visit order. */
export function tablesRead(root: PlanNode): string[] {
  const out: string[] = []
  visitPlan(root, (n) => {
    if (n.kind === 'TableScan' && !out.includes(n.table)) out.push(n.table)
  })
  return out
}
