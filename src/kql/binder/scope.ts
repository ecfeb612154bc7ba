/**
 * @module
 * Name scopes of the binder: `let` bindings, function parameters and `as` names, chained from the
 * innermost function body out to the query.
 */
import type * as P from '../plan/plan.js'
import type * as A from '../syntax/ast.js'
import type { KqlType } from '../types.js'

/** A bound tabular value and the name `union withsource=` reports for it. */
export interface TabularValue {
  readonly plan: P.PlanNode
  readonly name?: string
}

export type Binding =
  /**
   * A scalar value. `rowColumns` is set when the expression reads columns (a function argument
   * bound in its caller's row); it is then valid only in that same row context.
   */
  | { readonly kind: 'scalar'; readonly expr: P.Expr; readonly rowColumns?: readonly P.PlanColumn[] }
  | { readonly kind: 'tabular'; readonly value: TabularValue }
  | { readonly kind: 'function'; readonly lambda: A.Lambda; readonly scope: Scope; readonly name: string }
  /** A declared query parameter without a default value: referencing it is an error. */
  | { readonly kind: 'unset-parameter'; readonly type: KqlType }
  /** `declare pattern`: its definitions bind in the scope where it was declared. */
  | { readonly kind: 'pattern'; readonly statement: A.PatternStatement; readonly scope: Scope }

export class Scope {
  private readonly vars = new Map<string, Binding>()

  constructor(readonly parent?: Scope) {}

  get(name: string): Binding | undefined {
    return this.vars.get(name) ?? this.parent?.get(name)
  }

  set(name: string, binding: Binding): void {
    this.vars.set(name, binding)
  }

  /** Every visible name (for suggestions). */
  names(): string[] {
    const out = new Set<string>(this.parent?.names() ?? [])
    for (const k of this.vars.keys()) out.add(k)
    return [...out]
  }
}
