/**
 * `npm run bench [scenario-id ...]`: runs every scenario (or the named ones) and updates
 * docs/benchmarks.md. Timings never decide a test; they are reported here.
 */
import { fileURLToPath } from 'node:url'
import { printResult, type Scenario, writeSection, writeSummary } from './harness.js'
import { authOverhead } from './scenarios/auth-overhead.js'
import { callRecording } from './scenarios/call-recording.js'
import { exportScenario } from './scenarios/export.js'
import { hostileQueries } from './scenarios/hostile-queries.js'
import { ingestCompaction } from './scenarios/ingest-compaction.js'
import { kqlEngine } from './scenarios/kql-engine.js'
import { kqlScale } from './scenarios/kql-scale.js'
import { kqlSharedSegments } from './scenarios/kql-shared-segments.js'
import { kqlWarmHttp } from './scenarios/kql-warm-http.js'
import { ledgerAppend } from './scenarios/ledger-append.js'
import { ledgerVerify } from './scenarios/ledger-verify.js'
import { liveStream } from './scenarios/live-stream.js'

const SCENARIOS: readonly Scenario[] = [
  authOverhead,
  kqlEngine,
  kqlWarmHttp,
  kqlScale,
  kqlSharedSegments,
  ingestCompaction,
  ledgerAppend,
  callRecording,
  ledgerVerify,
  exportScenario,
  liveStream,
  hostileQueries,
]

const wanted = process.argv.slice(2)
const selected = wanted.length ? SCENARIOS.filter((s) => wanted.includes(s.id)) : SCENARIOS
if (selected.length === 0) {
  console.error(`unknown scenario; choose from ${SCENARIOS.map((s) => s.id).join(', ')}`)
  process.exit(2)
}
const file = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url))
for (const scenario of selected) {
  const result = await scenario.run()
  printResult(scenario, result)
  writeSection(file, scenario, result)
}
writeSummary(file)
console.log(`\nwrote ${file}`)
