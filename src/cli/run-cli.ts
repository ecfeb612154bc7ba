/**
 * @module
 * The `provenant` command line's dispatcher: operators' and automation's admin interface (the API has no token
 * or configuration endpoint). Every command has --help, prints errors in words and exits non-zero.
 */
import { VERSION } from '../version.js'
import { type Command, describeError, UsageError } from './cli-support.js'
import { accountCommand } from './commands/account.js'
import { applyCommand } from './commands/apply.js'
import { columnarCommand } from './commands/columnar.js'
import { connectionCommand } from './commands/connection.js'
import { ingestCommand } from './commands/ingest.js'
import { keysCommand } from './commands/keys.js'
import { serveCommand } from './commands/serve.js'
import { tokenCommand } from './commands/token.js'
import { verifyCommand, verifyExportCommand } from './commands/verify.js'
import { workspaceCommand } from './commands/workspace.js'

const COMMANDS: readonly Command[] = [
  serveCommand,
  workspaceCommand,
  accountCommand,
  tokenCommand,
  applyCommand,
  ingestCommand,
  verifyCommand,
  verifyExportCommand,
  connectionCommand,
  keysCommand,
  columnarCommand,
]

const COMMON = `Every command reads --data DIR (or PROVENANT_DATA_DIR; default ./data) and
--database-url URL (or DATABASE_URL; PostgreSQL instead of the embedded SQLite).`

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length))
  return `provenant ${VERSION}: Workspace Data Query and Change-History API server

usage: provenant <command> [options]    (provenant <command> --help for details)

${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

${COMMON}`
}

export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help())
    return name ? 0 : 2
  }
  if (name === '--version' || name === '-v') {
    console.log(VERSION)
    return 0
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (!command) {
    console.error(`provenant: unknown command "${name}"\n\n${help()}`)
    return 2
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(`${command.summary}\n\nusage: ${command.usage}\n\n${COMMON}`)
    return 0
  }
  try {
    await command.run(rest)
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (error) {
    console.error(`provenant ${command.name}: ${describeError(error)}`)
    if (error instanceof UsageError) {
      console.error(`\nusage: ${command.usage}`)
      return 2
    }
    return 1
  }
}
