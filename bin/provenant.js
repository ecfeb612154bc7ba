#!/usr/bin/env node
// The `provenant` command. Runs the compiled CLI (npm run build); in a checkout without a build,
// use `npm run dev` or `node --import tsx src/cli/main.ts`.
import { existsSync } from 'node:fs'

const entry = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(entry)) {
  console.error('provenant: the server is not built yet; run `npm run build` first')
  process.exit(1)
}
await import(entry.href)
