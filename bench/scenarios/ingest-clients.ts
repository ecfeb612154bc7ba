/**
 * @module
 * The ingest-compaction bench's clients, in a process of their own (so the server's event loop and
 * CPU figures are the server's): `node --import tsx ingest-clients.ts <base url> <token> <rows>
 * <clients> <batch>` builds the request bodies (batches of bench rows), sends `ready` over IPC,
 * waits for `go`, posts every batch with that many requests in flight and sends `done` (or
 * `failed` with the reason).
 */
import { readingRow } from './kql-dataset.js'

const [baseUrl, token, rowsText, clientsText, batchText] = process.argv.slice(2) as [string, string, string, string, string]
const rows = Number(rowsText)
const batch = Number(batchText)
const bodies: string[] = []
for (let start = 0; start < rows; start += batch)
  bodies.push(JSON.stringify(Array.from({ length: Math.min(batch, rows - start) }, (_, k) => readingRow(start + k))))

async function send(): Promise<void> {
  let next = 0
  const client = async (): Promise<void> => {
    for (;;) {
      const i = next++
      if (i >= bodies.length) return
      const response = await fetch(`${baseUrl}/oi-api/ingest/data-connections/readings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: bodies[i]!,
      })
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${await response.text()}`)
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: Number(clientsText) }, client))
}

process.on('message', (message) => {
  if (message !== 'go') return
  send().then(
    () => process.send!('done', () => process.exit(0)),
    (error: unknown) => process.send!(`failed: ${error instanceof Error ? error.message : String(error)}`, () => process.exit(1)),
  )
})
process.send!('ready')
