/**
 * @module
 * Runs the real `provenant` command (from source, through tsx) as a child process.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runCli as runCommandLine } from '../../src/cli/run-cli.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export function runCli(args: readonly string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return runTypeScript(['src/cli/main.ts', ...args], options)
}

/**
 * Runs a TypeScript file of this repository in a child node (tsx), with `umask` set for it when
 * given (a shell sets it, then becomes node, so the process itself runs under that umask).
 */
export function runTypeScript(
  args: readonly string[],
  options: { stdin?: string; env?: Record<string, string>; umask?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const node = [process.execPath, '--import', 'tsx', ...args]
    const [command, argv] =
      options.umask === undefined ? [node[0]!, node.slice(1)] : ['/bin/sh', ['-c', `umask ${options.umask} && exec "$0" "$@"`, ...node]]
    const child = spawn(command, argv, {
      cwd: ROOT,
      env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}

/**
 * Runs a command in this process (what the real binary runs, minus the process start: spawning
 * tsx costs seconds a call). The spawned `runCli` covers stdin and exit codes.
 */
export async function runCliInProcess(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = []
  const err: string[] = []
  const { log, error } = console
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  console.log = (...a: unknown[]) => {
    out.push(`${a.join(' ')}\n`)
  }
  console.error = (...a: unknown[]) => {
    err.push(`${a.join(' ')}\n`)
  }
  const previousExitCode = process.exitCode
  process.exitCode = undefined
  Object.assign(process.env, env)
  try {
    const code = await runCommandLine([...args])
    return { code, stdout: out.join(''), stderr: err.join('') }
  } finally {
    console.log = log
    console.error = error
    process.exitCode = previousExitCode
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
  }
}
