/**
 * @module
 * `provenant connection set-credentials | clear-credentials | credentials | status`: an operator's
 * way to give a connection its credentials (design §11), and the pull connectors' status
 * (connection-status.ts). Values come from standard input or a file, NEVER
 * from the command line, where they would sit in the process list and the shell history; an option
 * that looks like a value is refused without repeating it. Nothing here ever prints a value.
 */
import { readFileSync } from 'node:fs'
import type { Actor } from '../../domain/activity/index.js'
import type { CredentialStatus } from '../../domain/credentials/index.js'
import {
  type Command,
  configFrom,
  parse,
  readStdin,
  resolveWorkspace,
  STORE_OPTIONS,
  table,
  UsageError,
  withServices,
} from '../cli-support.js'
import { CONNECTION_STATUS_USAGE, connectionStatus } from './connection-status.js'

const CLI_ACTOR: Actor = { id: 'cli', name: 'provenant CLI', via: 'cli' }

const OPTIONS = {
  workspace: { type: 'string' },
  file: { type: 'string' },
} as const

const NEVER_ON_ARGV =
  'credentials are never taken from the command line (they would show in the process list and the shell history); pipe them on standard input or name a file with --file PATH'

/**
 * Checks argv before parsing, so that a refused option's text (which may be a password) is never
 * echoed by the parser's own error message.
 */
function refuseValuesOnArgv(argv: readonly string[]): void {
  const known = new Set([...Object.keys(STORE_OPTIONS), ...Object.keys(OPTIONS)].map((o) => `--${o}`).concat(['-h']))
  let positionals = 0
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg.startsWith('-')) {
      const name = arg.split('=', 1)[0]!
      if (!known.has(name)) {
        const looksSecret = /pass|secret|token|key|cred|user|value|auth|dsn|url/i.test(name)
        throw new UsageError(
          looksSecret ? `refusing option ${name.replace(/[^A-Za-z0-9-]/g, '')}: ${NEVER_ON_ARGV}` : `unknown option; ${NEVER_ON_ARGV}`,
        )
      }
      if (!arg.includes('=') && name !== '--help' && name !== '-h') i++ // skip the option's value
    } else if (++positionals > 2) {
      throw new UsageError(`too many arguments: ${NEVER_ON_ARGV}`)
    }
  }
}

/**
 * A JSON object of strings (`{"user": "...", "password": "..."}`), or `key=value` lines (blank
 * lines and lines starting with # ignored; everything after the first = is the value, kept as is
 * apart from a final carriage return).
 */
export function parseCredentialText(text: string): Record<string, string> {
  const trimmed = text.trim()
  if (trimmed === '')
    throw new UsageError(
      'no credentials were given: send a JSON object or key=value lines on standard input, or name a file with --file PATH',
    )
  if (trimmed.startsWith('{')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(trimmed)
    } catch {
      // JSON.parse's message quotes the text around the error: it is not repeated.
      throw new UsageError('the credentials are not valid JSON (send one object of string values, or key=value lines)')
    }
    return parsed as Record<string, string>
  }
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.replace(/\r$/, '')
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue
    const eq = line.indexOf('=')
    if (eq <= 0) throw new UsageError(`line ${n + 1} of the credentials is not key=value (the line is not shown)`)
    const key = line.slice(0, eq).trim()
    if (key in out) throw new UsageError(`credential "${key}" is given twice`)
    out[key] = line.slice(eq + 1)
  }
  return out
}

function describeStatus(s: CredentialStatus): string[] {
  return [
    s.connection,
    `${s.set ? 'set' : 'not set'}${s.configured === false ? ' (connection no longer configured)' : ''}`,
    s.keys.join(',') || '-',
    s.updatedAt ?? '-',
    s.updatedBy ?? '-',
    s.keyId ?? '-',
  ]
}

export const connectionCommand: Command = {
  name: 'connection',
  summary: "credentials of a connection (set, clear, show; values never shown) and pull connectors' status",
  usage: `provenant connection set-credentials LOOKUP [--file PATH] [--workspace W] < credentials
provenant connection clear-credentials LOOKUP [--workspace W]
provenant connection credentials [LOOKUP] [--workspace W]

  set-credentials reads a JSON object of strings ({"user": "...", "password": "..."}) or
  key=value lines from standard input, or from --file PATH; never from the command line.
  The values replace any earlier ones and are stored encrypted under the master key
  (PROVENANT_MASTER_KEY or <data>/master.key; see provenant keys).
  credentials shows whether they are set, their key names, who set them and when.

${CONNECTION_STATUS_USAGE}`,
  async run(argv) {
    if (argv[0] === 'status') return connectionStatus(argv.slice(1))
    refuseValuesOnArgv(argv)
    const { values, positionals } = parse(argv, OPTIONS)
    const [action, lookup] = positionals
    if (action !== 'set-credentials' && action !== 'clear-credentials' && action !== 'credentials') {
      throw new UsageError(`unknown action "${(action ?? '').slice(0, 40)}"; use set-credentials, clear-credentials, credentials or status`)
    }
    if (action !== 'credentials' && !lookup) throw new UsageError(`connection ${action} needs the connection LOOKUP`)
    if (action !== 'set-credentials' && values.file !== undefined) throw new UsageError('--file is for set-credentials only')
    // Read the values before opening the store, so a mistake in them costs no start-up.
    const given =
      action === 'set-credentials'
        ? parseCredentialText(values.file !== undefined ? readFileSync(values.file, 'utf8') : await readStdin())
        : undefined
    await withServices(configFrom(values), async (services) => {
      const workspace = await resolveWorkspace(services, values.workspace)
      if (action === 'set-credentials') {
        const status = await services.credentials.set(CLI_ACTOR, workspace.id, lookup!, given!)
        console.log(
          `credentials of connection ${lookup} set in workspace ${workspace.name} (keys: ${status.keys.join(', ')}; master key ${status.keyId})`,
        )
      } else if (action === 'clear-credentials') {
        const cleared = await services.credentials.clear(CLI_ACTOR, workspace.id, lookup!)
        console.log(cleared ? `credentials of connection ${lookup} cleared` : `connection ${lookup} had no credentials`)
      } else {
        const rows = lookup ? [await services.credentials.status(workspace.id, lookup)] : await services.credentials.list(workspace.id)
        console.log(table(['CONNECTION', 'STATUS', 'KEYS', 'UPDATED', 'BY', 'MASTER KEY'], rows.map(describeStatus)))
      }
    })
  },
}
