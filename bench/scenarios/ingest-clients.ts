/**
 * @module
 * Bench ingest clients, in a process of their own (so the server's event loop and CPU figures are
 * the server's): `node --import tsx ingest-clients.ts <base url> <token> <rows> <clients> <batch>
 * [stream <total>]` posts `rows` bench rows (kql-dataset's readingRow) in batches with that many
 * requests in flight. It sends `ready` over IPC, waits for `go`, posts every batch and sends `done`
 * (or `failed: <reason>`).
 *
 * Without `stream` (the ingest-compaction bench) it builds every request body before `ready`, so
 * their JSON is not measured as ingest. With `stream` (kql-dataset's loader, up to 100M rows) each
 * client builds its next batch just before sending it, so memory stays at one batch per client;
 * `total` spreads the rows' timestamps over the dataset's 30 days. It then also sends `progress <rows
 * acknowledged>` about every million rows, and `stats <json>` (its peak RSS and CPU) before `done`.
 */
import { readingRow } from './kql-dataset.js'

const [baseUrl, token, rowsText, clientsText, batchText, mode, totalText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
  string | undefined,
]
const rows = Number(rowsText)
const batch = Number(batchText)
const stream = mode === 'stream'
const total = stream ? Number(totalText ?? rows) : undefined
const batchCount = Math.ceil(rows / batch)
const bodyOf = (i: number): string => {
  const start = i * batch
  return JSON.stringify(Array.from({ length: Math.min(batch, rows - start) }, (_, k) => readingRow(start + k, total)))
}
const prebuilt = stream ? [] : Array.from({ length: batchCount }, (_, i) => bodyOf(i))

const PROGRESS_EVERY = 1_000_000

async function send(): Promise<void> {
  let next = 0
  let acknowledged = 0
  let reported = 0
  const client = async (): Promise<void> => {
    for (;;) {
      const i = next++
      if (i >= batchCount) return
      const response = await fetch(`${baseUrl}/oi-api/ingest/data-connections/readings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: stream ? bodyOf(i) : prebuilt[i]!,
      })
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`)
      await response.arrayBuffer()
      acknowledged += Math.min(batch, rows - i * batch)
      if (stream && acknowledged - reported >= PROGRESS_EVERY) {
        reported = acknowledged
        process.send!(`progress ${acknowledged}`)
      }
    }
  }
  await Promise.all(Array.from({ length: Number(clientsText) }, client))
}

process.on('message', (message) => {
  if (message !== 'go') return
  send().then(
    () => {
      if (stream) {
        const usage = process.resourceUsage()
        process.send!(
          `stats ${JSON.stringify({ peakRssBytes: usage.maxRSS * 1024, cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6 })}`,
        )
      }
      process.send!('done', () => process.exit(0))
    },
    (error: unknown) => process.send!(`failed: ${error instanceof Error ? error.message : String(error)}`, () => process.exit(1)),
  )
})
process.send!('ready')
