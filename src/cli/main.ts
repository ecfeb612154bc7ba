/**
 * @module
 * Entry point of the `provenant` command (bin/provenant.js runs the compiled form of this file).
 */
import { runCli } from './run-cli.js'

process.exitCode = await runCli(process.argv.slice(2))
