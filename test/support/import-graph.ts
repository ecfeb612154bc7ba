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
    return { from, to: target(from, specifier), specifier, line: lineOf(node) }
  })
  const visit = (node: Node): void => {
    if (isComputedDynamicImport(node)) edges.push({ from, to: COMPUTED, specifier: COMPUTED, line: lineOf(node) })
    node.forEachChild(visit)
  }
  source.forEachChild(visit)
  return edges
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
