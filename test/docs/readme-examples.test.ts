/**
 * Issue 18, item 3: every shell example of the README (and of docs/) works against the demo data
 * as written. A real `provenant serve --demo` starts on a free loopback port with a fresh data
 * directory; each `sh` block then runs with bash, in document order, the way a reader types them
 * into one terminal: variables a block sets (TOKEN, …) are there for the next one.
 *
 * Every `sh`/`bash` block carries a marker on the line before it:
 *   <!-- readme-test: run /REGEX/ -->     run it; exit code 0 and its output (stdout and stderr) matches
 *   <!-- readme-test: stream /REGEX/ -->  a stream that never ends: run it until its output matches, then stop it
 *   <!-- readme-test: skip REASON -->     not run here, for the reason given (installs, other servers, tools)
 * and a block of another language may carry
 *   <!-- readme-test: file NAME -->       the text says "saved as NAME": the test saves it in the terminal's directory
 *
 * What is substituted, and only this: the demo's address `127.0.0.1:8080` becomes the test server's,
 * and `./bin/provenant.js` runs the same CLI from source (`node --import tsx src/cli/main.ts`: the
 * bin script runs the build of that source, which `npm start` makes; the test does not build).
 * The data directory reaches the CLI as PROVENANT_DATA_DIR, as the README's configuration table says.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { freePort } from '../support/child-server.js'
import { documentationFiles, type FencedBlock, fencedBlocks, ROOT } from './markdown.js'

const SHELL = new Set(['sh', 'bash', 'shell'])
/** The longest a block may take (a stream until it shows what it must); a hung block fails instead of hanging the run. */
const BLOCK_LIMIT_MS = 120_000

type Plan = { kind: 'run' | 'stream'; expect: RegExp } | { kind: 'skip'; reason: string }

/** Reads a block's marker; a shell block without one (or with a malformed one) is an error. */
function planOf(block: Pick<FencedBlock, 'file' | 'line' | 'marker'>): Plan {
  const where = `${block.file}:${block.line}`
  if (block.marker === undefined)
    throw new Error(`${where}: a shell block needs a <!-- readme-test: run|stream /REGEX/ | skip REASON --> line before it`)
  const run = /^(run|stream)\s+\/(.+)\/([a-z]*)$/.exec(block.marker)
  if (run) return { kind: run[1] as 'run' | 'stream', expect: new RegExp(run[2]!, run[3]) }
  const skip = /^skip\s+(\S.*)$/.exec(block.marker)
  if (skip) return { kind: 'skip', reason: skip[1]! }
  throw new Error(`${where}: cannot read the marker "${block.marker}"`)
}

/** The block as the test runs it: the test server's address, the CLI from source. */
function substitute(code: string, port: number): string {
  return code.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replaceAll('./bin/provenant.js', 'provenant_from_source')
}

/** Names a block assigns at the start of a line (`TOKEN=$(…)`), to hand on to the next blocks. */
function assignedNames(code: string): string[] {
  return [...new Set([...code.matchAll(/^\s*([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!))]
}

interface Outcome {
  readonly code: number | null
  readonly output: string
  readonly matched: boolean
}

describe('the README and docs shell examples run against the demo server', () => {
  const work = mkdtempSync(join(tmpdir(), 'provenant-readme-'))
  const dataDir = join(work, 'data')
  const cwd = join(work, 'terminal')
  const state = join(work, 'state.sh')
  let port: number
  let server: ChildProcess | undefined
  let serverOutput = ''

  before(async () => {
    port = await freePort()
    server = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--demo', '--port', String(port), '--host', '127.0.0.1', '--data', dataDir],
      { cwd: ROOT, env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    server.stdout!.on('data', (d) => {
      serverOutput += d
    })
    server.stderr!.on('data', (d) => {
      serverOutput += d
    })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the demo server did not start within 120 s: ${serverOutput}`)), 120_000)
      const check = (): void => {
        // The demo's sign-ins are printed after the address: the seeding is done by then.
        if (!/Provenant is running at[\s\S]*Mint an API token/.test(serverOutput)) return
        clearTimeout(timer)
        server!.stdout!.off('data', check)
        resolve()
      }
      server!.stdout!.on('data', check)
      server!.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the demo server exited (${code}) before listening: ${serverOutput}`))
      })
    })
    mkdirSync(cwd)
    writeFileSync(state, '')
    for (const file of saved) writeFileSync(join(cwd, file.name), `${file.code}\n`)
  })

  after(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve))
      server.kill('SIGTERM')
      await exited
    }
    rmSync(work, { recursive: true, force: true })
  })

  /** Runs one block in a fresh bash that first reads what earlier blocks set. */
  function runBlock(code: string, plan: { kind: 'run' | 'stream'; expect: RegExp }): Promise<Outcome> {
    const names = assignedNames(code)
    const script = [
      'set -eo pipefail',
      // tsx by its resolved URL: the terminal is a temporary directory, where a bare `tsx` would not resolve.
      `provenant_from_source() { node --import ${JSON.stringify(import.meta.resolve('tsx'))} ${JSON.stringify(join(ROOT, 'src/cli/main.ts'))} "$@"; }`,
      `source ${JSON.stringify(state)}`,
      code,
      ...(names.length ? [`declare -p ${names.join(' ')} >> ${JSON.stringify(state)}`] : []),
    ].join('\n')
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', script], {
        cwd,
        detached: true, // its own process group: stopping a stream stops curl too
        env: {
          ...process.env,
          PROVENANT_DATA_DIR: dataDir,
          PROVENANT_LOG_LEVEL: 'warn',
          // `require("ws")` in the README's Node example resolves from the clone; the terminal here is a temporary directory.
          NODE_PATH: join(ROOT, 'node_modules'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      let matched = false
      const stopGroup = () => {
        try {
          process.kill(-child.pid!, 'SIGTERM')
        } catch {
          // already gone
        }
      }
      const limit = setTimeout(stopGroup, BLOCK_LIMIT_MS)
      const onData = (d: Buffer) => {
        output += d
        if (plan.kind === 'stream' && !matched && plan.expect.test(output)) {
          matched = true
          stopGroup()
        }
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
      child.on('error', reject)
      child.on('close', (exitCode) => {
        clearTimeout(limit)
        resolve({ code: exitCode, output, matched: plan.kind === 'stream' ? matched : plan.expect.test(output) })
      })
    })
  }

  const allBlocks = documentationFiles().flatMap((file) => fencedBlocks(file))
  const blocks = allBlocks.filter((b) => SHELL.has(b.language))
  /** Files the text asks the reader to save, written before the first block runs. */
  const saved = allBlocks.flatMap((b) => {
    const name = /^file\s+([\w.-]+)$/.exec(b.marker ?? '')?.[1]
    return name ? [{ name, code: b.code }] : []
  })

  it('finds the README examples, and every shell block says whether it runs', () => {
    assert.ok(blocks.filter((b) => b.file === 'README.md').length >= 10, `${blocks.length} shell blocks`)
    for (const block of blocks) planOf(block)
  })

  for (const block of blocks) {
    const plan = (() => {
      try {
        return planOf(block)
      } catch {
        return undefined
      }
    })()
    const title = `${block.file}:${block.line} ${
      block.code
        .split('\n')
        .find((l) => l.trim() && !l.startsWith('#'))
        ?.slice(0, 70) ?? ''
    }`
    if (plan === undefined || plan.kind === 'skip') {
      it(title, { skip: plan ? plan.reason : 'no marker (reported above)' }, () => {})
      continue
    }
    it(title, async () => {
      const outcome = await runBlock(substitute(block.code, port), plan)
      const shown = `\n--- output ---\n${outcome.output.slice(-3000)}\n--- server ---\n${serverOutput.slice(-1500)}`
      if (plan.kind === 'run') assert.equal(outcome.code, 0, `exit code ${outcome.code}${shown}`)
      assert.ok(outcome.matched, `the output does not match ${plan.expect}${shown}`)
    })
  }
})

describe('the README test can fail', () => {
  it('a shell block without a marker, or with one it cannot read, is an error', () => {
    assert.throws(() => planOf({ file: 'README.md', line: 1, marker: undefined }), /needs a <!-- readme-test/)
    assert.throws(() => planOf({ file: 'README.md', line: 1, marker: 'run results' }), /cannot read the marker/)
    assert.deepEqual(planOf({ file: 'README.md', line: 1, marker: 'skip needs Claude Code' }), {
      kind: 'skip',
      reason: 'needs Claude Code',
    })
  })
})
