/**
 * @module
 * Waiting for something asynchronous (a connector's poll, a broker's delivery) without timing
 * assertions: polls `probe` until `done` holds, and fails with the last value seen after `timeoutMs`.
 */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: T | undefined
  for (;;) {
    last = await probe()
    if (done(last)) return last
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
