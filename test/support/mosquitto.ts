/**
 * @module
 * A test's own Mosquitto broker on a free loopback port (the machine's broker on 1883 is shared and
 * anonymous), optionally with a password file made by `mosquitto_passwd`. Session state lives in
 * the broker's memory, so it survives our server's restarts, as a real broker's would.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './child-server.js'

export interface TestBroker {
  readonly url: string
  readonly port: number
  stop(): Promise<void>
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const { connect } = await import('node:net')
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited: ${stderr()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}: ${stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export async function startMosquitto(options: { users?: Readonly<Record<string, string>> } = {}): Promise<TestBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-mqtt-'))
  // Mosquitto started as root drops to its own user: it must still read its files here.
  chmodSync(dir, 0o755)
  const port = await freePort()
  const lines = [`listener ${port} 127.0.0.1`, 'persistence false', 'max_inflight_messages 100', 'max_queued_messages 10000']
  if (options.users) {
    const file = join(dir, 'passwords')
    let first = true
    for (const [user, password] of Object.entries(options.users)) {
      execFileSync('mosquitto_passwd', [...(first ? ['-c'] : []), '-b', file, user, password])
      first = false
    }
    chmodSync(file, 0o644)
    lines.push('allow_anonymous false', `password_file ${file}`)
  } else {
    lines.push('allow_anonymous true')
  }
  const conf = join(dir, 'mosquitto.conf')
  writeFileSync(conf, `${lines.join('\n')}\n`)
  const child = spawn('mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  // A test process that dies must not leave its broker behind.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  await waitForPort(port, child, () => err)
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async stop() {
      process.off('exit', killOnExit)
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
