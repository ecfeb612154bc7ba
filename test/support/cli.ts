/**
 * @module
 * Runs the real `provenant` command (from source, through tsx) as a child process.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export function runCli(args: readonly string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, PROVENANT_LOG_LEVEL: 'warn', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}
