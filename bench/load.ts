/**
 * @module
 * HTTP load with autocannon (its own worker thread, so the server's event loop is measured, not
 * the client's).
 */
import autocannon from 'autocannon'

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly non2xx: number
  readonly errors: number
}

export async function load(options: {
  url: string
  headers?: Record<string, string>
  method?: string
  body?: string
  connections?: number
  seconds?: number
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers ?? {},
    ...(options.body ? { body: options.body } : {}),
    connections: options.connections ?? 32,
    duration: options.seconds ?? 5,
    workers: 1,
  })
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  }
}
