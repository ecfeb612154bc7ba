/**
 * @module
 * Raw HTTP for the fuzz and leak suites: the body is sent byte for byte as given (fetch would
 * re-encode or refuse it), over a fresh connection, and the answer comes back as text whatever it is.
 */
import { request as httpRequest } from 'node:http'

export interface RawAnswer {
  readonly status: number
  readonly text: string
  readonly contentType: string
}

export interface RawOptions {
  /**
   * An event stream never ends by itself. Without this its status is the answer (text empty); with
   * it, what the stream sends within this many milliseconds is the text.
   */
  readonly eventStreamMs?: number
}

export function sendRaw(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  payload?: Buffer | string,
  options: RawOptions = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, baseUrl),
      {
        method,
        agent: false,
        headers: { ...headers, ...(payload !== undefined ? { 'content-length': String(Buffer.byteLength(payload)) } : {}) },
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '')
        const chunks: Buffer[] = []
        let answered = false
        const done = () => {
          if (answered) return
          answered = true
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), contentType })
        }
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', done)
        if (contentType.includes('text/event-stream')) {
          if (options.eventStreamMs === undefined) {
            res.destroy()
            done()
          } else {
            setTimeout(() => {
              res.destroy()
              done()
            }, options.eventStreamMs)
          }
        }
      },
    )
    req.on('error', reject)
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${path}`)))
    if (payload !== undefined) req.write(payload)
    req.end()
  })
}
