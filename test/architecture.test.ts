/**
 * The import boundaries of design §2 and docs/architecture.md (style notes §6.7, issue 19 item 5).
 * TypeScript's own parser lists every module reference of every file in src/ (test/support/import-graph.ts):
 * imports over several lines, `import type`, `export … from`, `import('…')` calls and types. Each
 * layer's rule names what it may not reach. Known debts are listed edge by edge below, so no new one
 * can appear unnoticed, and an entry that no longer occurs fails too, so the list only shrinks.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { COMPUTED, type ImportEdge, readImportGraph } from './support/import-graph.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Database drivers, servers, protocol stacks and the logger: infrastructure the pure layers never touch. */
const DRIVERS = /^(fastify|@fastify\/.+|pg|pg-.+|better-sqlite3|ws|pino|mqtt|@modelcontextprotocol\/.+)$/
/** Node built-ins that do I/O or start threads or processes (the KQL engine stays pure). */
const IO_BUILTINS = /^node:(fs|fs\/promises|net|http|https|http2|tls|dgram|child_process|worker_threads|cluster)$/

interface Rule {
  /** The files the rule governs (root-relative path prefix). */
  readonly files: string
  readonly why: string
  /** True when an edge from one of `files` to `to` breaks the rule. */
  readonly forbids: (to: string, from: string) => boolean
}

const ours = (to: string) => to.startsWith('src/')
/** The edges: what the outside world talks to (the API, the portal, MCP, the CLI). */
const EDGE = /^src\/(http|portal|mcp|cli)\//
const under = (to: string, ...layers: string[]) => layers.some((layer) => to.startsWith(`src/${layer}/`))

const RULES: readonly Rule[] = [
  {
    files: 'src/kql/',
    why: 'the KQL engine is pure: it imports only src/kql and src/shared, no driver and no I/O built-in',
    forbids: (to) => (ours(to) ? !under(to, 'kql', 'shared') : DRIVERS.test(to) || IO_BUILTINS.test(to)),
  },
  {
    files: 'src/domain/',
    why: 'the domain imports only src/domain, src/kql and src/shared, and no driver, server or logger',
    forbids: (to) => (ours(to) ? !under(to, 'domain', 'kql', 'shared') : DRIVERS.test(to)),
  },
  {
    files: 'src/shared/',
    why: 'shared code imports nothing of ours outside src/shared, and no driver',
    forbids: (to) => (ours(to) ? !under(to, 'shared') : DRIVERS.test(to)),
  },
  {
    files: 'src/adapters/',
    why: 'adapters implement the domain ports over databases, files and networks; they never reach an edge',
    forbids: (to) => under(to, 'http', 'portal', 'mcp', 'cli'),
  },
  {
    files: 'src/http/',
    why: 'the API edge reaches the adapters only through domain services, and no other edge',
    forbids: (to) => under(to, 'adapters', 'portal', 'cli') || /^(pg|better-sqlite3)$/.test(to),
  },
  {
    files: 'src/mcp/',
    why: 'the MCP edge calls domain services only; the HTTP edge mounts it, not the reverse',
    forbids: (to) => under(to, 'adapters', 'http', 'portal', 'cli') || /^(fastify|pg|better-sqlite3)$/.test(to),
  },
  {
    files: 'src/portal/',
    why: 'the portal is an edge of its own: no adapters, and nothing from the API edge (shared pieces live in the domain or src/shared)',
    forbids: (to) => under(to, 'adapters', 'http', 'mcp', 'cli') || /^(pg|better-sqlite3)$/.test(to),
  },
  {
    files: 'src/',
    why: 'no edge receives raw storage: the API, portal, MCP and CLI get domain services (src/domain/services.ts), never the Stores aggregate',
    forbids: (to, from) => EDGE.test(from) && to === 'src/domain/stores.ts',
  },
  {
    files: 'src/',
    why: 'a RecordID is parsed in one place: edges hand it as sent to a ledger command (src/domain/ledger/ledger-commands.ts), never to src/domain/ledger/record-id.ts',
    forbids: (to, from) => EDGE.test(from) && to === 'src/domain/ledger/record-id.ts',
  },
  {
    files: 'src/',
    why: "an edge uses a domain feature only through that feature's index.ts",
    forbids: (to, from) => EDGE.test(from) && domainFeature(to) !== undefined && !to.endsWith('/index.ts'),
  },
  {
    files: 'src/',
    why: 'only the signatures feature makes a ConfirmedSignature: everyone else imports src/domain/signatures/index.ts, which does not export the minting',
    forbids: (to, from) => to === 'src/domain/signatures/confirmed-signature.ts' && !from.startsWith('src/domain/signatures/'),
  },
  {
    files: 'src/',
    why: 'the KQL engine is used only through its public surface, src/kql/index.ts',
    forbids: (to, from) => !from.startsWith('src/kql/') && to.startsWith('src/kql/') && to !== 'src/kql/index.ts',
  },
  {
    files: 'src/',
    why: 'an import whose module is computed at run time cannot be checked',
    forbids: (to) => to === COMPUTED,
  },
  {
    files: 'src/domain/',
    why: "a domain feature uses another feature only through that feature's index.ts",
    forbids: (to, from) => {
      const target = domainFeature(to)
      return target !== undefined && domainFeature(from) !== undefined && domainFeature(from) !== target && !to.endsWith('/index.ts')
    },
  },
]

/**
 * The feature folder of a domain file (`ledger` for src/domain/ledger/x.ts). Files directly in
 * src/domain (errors.ts, the Stores and Services wiring) belong to no feature.
 */
function domainFeature(path: string): string | undefined {
  const parts = path.split('/')
  return parts[0] === 'src' && parts[1] === 'domain' && parts.length > 3 ? parts[2] : undefined
}

/**
 * Cross-feature imports inside src/domain that bypass the feature's index.ts, one entry per edge
 * (paths under src/domain). Empty since every feature has an index.ts (issue 19 item 3): a new
 * entry is a debt to pay, and an entry that no longer occurs fails the test.
 */
const CROSS_FEATURE_DEBTS: Readonly<Record<string, readonly string[]>> = {}

const debtKey = (from: string, to: string) => `src/domain/${from} -> src/domain/${to}`
const DEBTS = new Set(Object.entries(CROSS_FEATURE_DEBTS).flatMap(([from, tos]) => tos.map((to) => debtKey(from, to))))

/** Architecture rules apply to shipped code: unit tests beside a module may use test helpers. */
const governed = (path: string) => path.startsWith('src/') && !path.endsWith('.test.ts')

/** `fs` and `node:fs` name the same module; rules are written with the `node:` prefix. */
function normalized(edge: ImportEdge): ImportEdge {
  return !edge.to.startsWith('node:') && isBuiltin(edge.to) ? { ...edge, to: `node:${edge.to}` } : edge
}

/** Every edge that breaks a rule, as `file:line imports 'specifier': why`, and the debts it used. */
function violations(edges: readonly ImportEdge[]): { offences: string[]; debtsSeen: Set<string> } {
  const offences: string[] = []
  const debtsSeen = new Set<string>()
  for (const edge of edges.map(normalized)) {
    for (const rule of RULES) {
      if (!edge.from.startsWith(rule.files) || !rule.forbids(edge.to, edge.from)) continue
      const key = `${edge.from} -> ${edge.to}`
      if (DEBTS.has(key)) debtsSeen.add(key)
      else offences.push(`${edge.from}:${edge.line} imports '${edge.specifier}': ${rule.why}`)
    }
  }
  return { offences, debtsSeen }
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? walk(full) : /\.[cm]?[jt]sx?$/.test(name) ? [relative(ROOT, full)] : []
  })
}

/**
 * The SQL stores ask the engine's named capabilities (src/adapters/sql/sql-db.ts) and never
 * compare its name, so adding an engine means writing one adapter folder. Only the engine folders
 * and tables keyed by every engine name (`Record<Dialect, …>`, which a new engine cannot skip) name
 * one. Comments are dropped before the search.
 */
const ENGINE_NAME_BRANCH = /(?:===|!==)\s*'(?:sqlite|postgres)'|'(?:sqlite|postgres)'\s*(?:===|!==)|\bcase\s+'(?:sqlite|postgres)'/
const branchesOnEngines = (path: string) =>
  governed(path) && path.startsWith('src/adapters/') && !/^src\/adapters\/(sqlite|postgres)\//.test(path)

function engineNameBranches(path: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
  return code.split('\n').flatMap((line, i) => (ENGINE_NAME_BRANCH.test(line) ? [`${path}:${i + 1} compares an engine's name`] : []))
}

/**
 * Files of ours that import each other in a loop at run time (Tarjan's strongly connected
 * components over the edges that survive into JavaScript), each as its sorted file list. A loop
 * of type-only imports costs nothing at run time and is not reported; a runtime loop makes module
 * order matter (a value read before its module finished loading).
 */
function runtimeCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const e of edges) if (!e.typeOnly && ours(e.to) && e.to !== e.from) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  const order = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (file: string): void => {
    order.set(file, order.size)
    low.set(file, order.get(file)!)
    stack.push(file)
    for (const to of next.get(file) ?? []) {
      if (!order.has(to)) {
        visit(to)
        low.set(file, Math.min(low.get(file)!, low.get(to)!))
      } else if (stack.includes(to)) low.set(file, Math.min(low.get(file)!, order.get(to)!))
    }
    if (low.get(file) !== order.get(file)) return
    const component = stack.splice(stack.indexOf(file))
    if (component.length > 1) cycles.push(component.sort())
  }
  for (const file of [...next.keys()].sort()) if (!order.has(file)) visit(file)
  return cycles
}

describe('architecture: import boundaries', () => {
  let graph: { files: string[]; edges: ImportEdge[] }
  before(() => {
    graph = readImportGraph(ROOT, governed)
  })

  it('parses every source file in src/', () => {
    const onDisk = walk(join(ROOT, 'src')).filter(governed).sort()
    assert.ok(onDisk.length > 100, `only ${onDisk.length} source files found`)
    assert.deepEqual(graph.files, onDisk, 'a file outside the TypeScript project would escape these rules')
    assert.ok(graph.edges.length > 500, `only ${graph.edges.length} imports found`)
  })

  it('every layer keeps to its dependencies', () => {
    assert.deepEqual(violations(graph.edges).offences, [])
  })

  it('outside the engine folders, adapters ask the engine its capabilities instead of comparing its name', () => {
    const files = walk(join(ROOT, 'src/adapters')).filter(branchesOnEngines)
    assert.ok(files.length > 30, `only ${files.length} adapter files found`)
    assert.deepEqual(
      files.flatMap((path) => engineNameBranches(path, readFileSync(join(ROOT, path), 'utf8'))),
      [],
    )
  })

  it('no files import each other in a loop at run time (type-only loops are allowed)', () => {
    assert.deepEqual(runtimeCycles(graph.edges), [])
  })

  it('every listed debt still exists (remove an entry once its import is fixed)', () => {
    const { debtsSeen } = violations(graph.edges)
    assert.deepEqual(
      [...DEBTS].filter((key) => !debtsSeen.has(key)),
      [],
    )
  })
})

describe('architecture: the check cannot be fooled (self-test)', () => {
  it('finds an engine-name comparison in either order or a case label, and not in a comment or an engine-keyed table', () => {
    const text = [
      "const lock = db.engine.name === 'postgres' ? ' FOR UPDATE' : ''",
      "if ('sqlite' !== name) return",
      "  case 'postgres':",
      "// if (db.dialect === 'sqlite') was the old way",
      "/* dialect === 'postgres' */ const OPEN: Record<Dialect, string> = { sqlite: 'a', postgres: 'b' }",
      "const url = 'postgres://host/db'",
    ].join('\n')
    assert.deepEqual(engineNameBranches('src/adapters/sql/x.ts', text), [
      "src/adapters/sql/x.ts:1 compares an engine's name",
      "src/adapters/sql/x.ts:2 compares an engine's name",
      "src/adapters/sql/x.ts:3 compares an engine's name",
    ])
    assert.equal(branchesOnEngines('src/adapters/sqlite/sqlite-engine.ts'), false)
    assert.equal(branchesOnEngines('src/adapters/columnar/columnar-store.ts'), true)
  })

  let project: string
  after(() => rmSync(project, { recursive: true, force: true }))

  it('catches multi-line, type-only, re-exported and dynamic imports, and ignores strings and comments', () => {
    project = realpathSync(mkdtempSync(join(tmpdir(), 'provenant-arch-')))
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', types: [] }, include: ['src'] }))
    mkdirSync(join(project, 'src/domain/ledger'), { recursive: true })
    mkdirSync(join(project, 'src/domain/access'), { recursive: true })
    writeFileSync(
      join(project, 'src/domain/ledger/sneaky.ts'),
      [
        'import {',
        '  openStores,',
        "} from '../../adapters/open-stores.js'",
        'import type {',
        '  FastifyInstance,',
        "} from 'fastify'",
        "export * from '../../http/app.js'",
        "import { caller } from '../access/caller.js'",
        'const decoy = "import x from \'../../adapters/sql/sql-db.js\'"',
        "// import y from '../../portal/layout.js'",
        "const slash = /'/.test(decoy) ? 1 / 2 : 0",
        'export async function load(name: string) {',
        '  const driver = await import(',
        "    'pg'",
        '  )',
        '  await import(name)',
        "  type Db = typeof import('../../kql/sql/sql-compiler.js')",
        '  return [openStores, caller, driver, slash]',
        '}',
        '',
      ].join('\n'),
    )
    mkdirSync(join(project, 'src/portal'), { recursive: true })
    mkdirSync(join(project, 'src/domain/signatures'), { recursive: true })
    writeFileSync(
      join(project, 'src/portal/page.ts'),
      "import { parseRecordId } from '../domain/ledger/record-id.js'\nimport { mintSignature } from '../domain/signatures/confirmed-signature.js'\nexport { parseRecordId, mintSignature }\n",
    )
    mkdirSync(join(project, 'src/http'), { recursive: true })
    writeFileSync(
      join(project, 'src/http/route.ts'),
      [
        'import {',
        '  type LedgerRecordView,',
        "} from '../domain/ledger/ledger-service.js'",
        "import { verifyAnswerOf } from '../domain/ledger/index.js'",
        "import { InvalidInputError } from '../domain/errors.js'",
        'export type { LedgerRecordView }',
        'export { verifyAnswerOf, InvalidInputError }',
        '',
      ].join('\n'),
    )
    mkdirSync(join(project, 'src/shared'), { recursive: true })
    writeFileSync(join(project, 'src/shared/p.ts'), "import { q } from './q.js'\nexport const p = () => q\n")
    writeFileSync(join(project, 'src/shared/q.ts'), "import { p } from './p.js'\nexport const q = () => p\n")
    writeFileSync(join(project, 'src/shared/x.ts'), "import { y } from './y.js'\nexport interface X { y: typeof y }\n")
    writeFileSync(
      join(project, 'src/shared/y.ts'),
      [
        "import type { X } from './x.js'",
        "import { type X as Same } from './x.js'",
        "export type { X } from './x.js'",
        "export const y = (x: X, same: Same, other: import('./x.js').X) => [x, same, other]",
        '',
      ].join('\n'),
    )
    const { edges } = readImportGraph(project, governed)
    assert.deepEqual(runtimeCycles(edges), [['src/shared/p.ts', 'src/shared/q.ts']], 'a type-only loop (x.ts, y.ts) is no runtime cycle')
    assert.equal(edges.filter((e) => e.from === 'src/shared/y.ts' && e.typeOnly).length, 4)
    const { offences } = violations(edges)
    assert.deepEqual(offences, [
      "src/domain/ledger/sneaky.ts:3 imports '../../adapters/open-stores.js': the domain imports only src/domain, src/kql and src/shared, and no driver, server or logger",
      "src/domain/ledger/sneaky.ts:6 imports 'fastify': the domain imports only src/domain, src/kql and src/shared, and no driver, server or logger",
      "src/domain/ledger/sneaky.ts:7 imports '../../http/app.js': the domain imports only src/domain, src/kql and src/shared, and no driver, server or logger",
      "src/domain/ledger/sneaky.ts:8 imports '../access/caller.js': a domain feature uses another feature only through that feature's index.ts",
      "src/domain/ledger/sneaky.ts:14 imports 'pg': the domain imports only src/domain, src/kql and src/shared, and no driver, server or logger",
      "src/domain/ledger/sneaky.ts:17 imports '../../kql/sql/sql-compiler.js': the KQL engine is used only through its public surface, src/kql/index.ts",
      "src/domain/ledger/sneaky.ts:16 imports '<computed>': an import whose module is computed at run time cannot be checked",
      "src/http/route.ts:3 imports '../domain/ledger/ledger-service.js': an edge uses a domain feature only through that feature's index.ts",
      "src/portal/page.ts:1 imports '../domain/ledger/record-id.js': a RecordID is parsed in one place: edges hand it as sent to a ledger command (src/domain/ledger/ledger-commands.ts), never to src/domain/ledger/record-id.ts",
      "src/portal/page.ts:1 imports '../domain/ledger/record-id.js': an edge uses a domain feature only through that feature's index.ts",
      "src/portal/page.ts:2 imports '../domain/signatures/confirmed-signature.js': an edge uses a domain feature only through that feature's index.ts",
      "src/portal/page.ts:2 imports '../domain/signatures/confirmed-signature.js': only the signatures feature makes a ConfirmedSignature: everyone else imports src/domain/signatures/index.ts, which does not export the minting",
    ])
  })
})
