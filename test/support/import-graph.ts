/**
 * @module
 * Every module reference in a TypeScript project, read by TypeScript's own parser (issue 19 item 5).
 * TypeScript 7's compiler runs natively; its JavaScript API (`typescript/unstable/sync`) starts it
 * as a child process and hands back parsed source files. A source file's `imports` is the compiler's
 * own list of module references: static imports on any number of lines, `import type`, side-effect
 * imports, `export … from`, `import('…')` calls, `import('…')` types and `import x = require('…')`.
 * Strings and comments are never mistaken for imports. A dynamic import whose argument is not a
 * literal cannot be checked, so it is reported as an edge to `<computed>`.
 */
import { dirname, join, relative, resolve } from 'node:path'
import { type Node, type SourceFile, SyntaxKind } from 'typescript/unstable/ast'
import { API } from 'typescript/unstable/sync'

/** One module reference: `from` and a relative `to` are paths under the root (`src/…`, `.ts`). */
export interface ImportEdge {
  readonly from: string
  /** The root-relative `.ts` path for a relative specifier, else the package name (`pg`, `node:fs`). */
  readonly to: string
  readonly specifier: string
  readonly line: number
  /**
   * True when the reference vanishes from the emitted JavaScript: `import type`, `export type`, an
   * import whose every name is `type`, or an `import('…')` type. Such an edge cannot form a cycle
   * at run time.
   */
  readonly typeOnly: boolean
}

export const COMPUTED = '<computed>'

/**
 * Parses the project of `tsconfig` and returns the edges of every file under `root` whose
 * root-relative path passes `include`, plus the list of those files.
 */
export function readImportGraph(
  root: string,
  include: (path: string) => boolean,
  tsconfig = 'tsconfig.json',
): { files: string[]; edges: ImportEdge[] } {
  const api = new API({ cwd: root })
  try {
    const snapshot = api.updateSnapshot({ openProject: join(root, tsconfig) })
    const project = snapshot.getProject(join(root, tsconfig)) ?? snapshot.getProjects()[0]
    if (!project) throw new Error(`TypeScript opened no project for ${tsconfig}`)
    const files: string[] = []
    const edges: ImportEdge[] = []
    for (const fileName of project.program.getSourceFileNames()) {
      const path = relative(root, fileName)
      if (path.startsWith('..') || path.includes('node_modules') || !include(path)) continue
      const source = project.program.getSourceFile(fileName)
      if (!source) throw new Error(`TypeScript has no parse of ${fileName}`)
      files.push(path)
      edges.push(...edgesOf(source, path))
    }
    return { files: files.sort(), edges }
  } finally {
    api.close()
  }
}

function edgesOf(source: SourceFile, from: string): ImportEdge[] {
  const lineOf = (node: Node) => source.getLineAndCharacterOfPosition(startOf(source.text, node.pos)).line + 1
  const edges = source.imports.map((node) => {
    const specifier = (node as unknown as { text: string }).text
    return { from, to: target(from, specifier), specifier, line: lineOf(node), typeOnly: isTypeOnly(node) }
  })
  const visit = (node: Node): void => {
    if (isComputedDynamicImport(node)) edges.push({ from, to: COMPUTED, specifier: COMPUTED, line: lineOf(node), typeOnly: false })
    node.forEachChild(visit)
  }
  source.forEachChild(visit)
  return edges
}

interface Named {
  readonly isTypeOnly?: boolean
}
/** The AST around a module specifier, as far as type-only-ness needs it. */
interface SpecifierParent {
  readonly kind: SyntaxKind
  readonly isTypeOnly?: boolean
  readonly importClause?: {
    readonly isTypeOnly?: boolean
    readonly name?: unknown
    readonly namedBindings?: { readonly kind: SyntaxKind; readonly elements?: readonly Named[] }
  }
  readonly exportClause?: { readonly kind: SyntaxKind; readonly elements?: readonly Named[] }
  readonly parent?: SpecifierParent
}

function isTypeOnly(specifier: Node): boolean {
  const parent = (specifier as unknown as { parent?: SpecifierParent }).parent
  if (parent === undefined) return false
  const allTypes = (elements: readonly Named[] | undefined) =>
    elements !== undefined && elements.length > 0 && elements.every((e) => e.isTypeOnly)
  switch (parent.kind) {
    case SyntaxKind.ImportDeclaration: {
      const clause = parent.importClause
      if (clause === undefined) return false // a side-effect import runs the module
      if (clause.isTypeOnly) return true
      return clause.name === undefined && clause.namedBindings?.kind === SyntaxKind.NamedImports && allTypes(clause.namedBindings.elements)
    }
    case SyntaxKind.ExportDeclaration:
      return parent.isTypeOnly === true || (parent.exportClause?.kind === SyntaxKind.NamedExports && allTypes(parent.exportClause.elements))
    case SyntaxKind.ExternalModuleReference:
      return parent.parent?.isTypeOnly === true
    case SyntaxKind.LiteralType:
      return parent.parent?.kind === SyntaxKind.ImportType
    default:
      return false
  }
}

function isComputedDynamicImport(node: Node): boolean {
  if (node.kind !== SyntaxKind.CallExpression) return false
  const call = node as unknown as { expression: Node; arguments: readonly Node[] }
  const argument = call.arguments[0]
  return (
    call.expression.kind === SyntaxKind.ImportKeyword &&
    (argument === undefined || (argument.kind !== SyntaxKind.StringLiteral && argument.kind !== SyntaxKind.NoSubstitutionTemplateLiteral))
  )
}

/** A node's `pos` includes its leading trivia; lines are reported where its text starts. */
function startOf(text: string, pos: number): number {
  const match = /^(?:\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/.exec(text.slice(pos))
  return pos + (match?.[0].length ?? 0)
}

/** Relative specifiers become root-relative `.ts` paths (NodeNext writes `.js`); packages stay as named. */
function target(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier
  return resolve('/', dirname(from), specifier).slice(1).replace(/\.js$/, '.ts')
}
