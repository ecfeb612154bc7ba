/**
 * @module
 * `X-Request-Id`: echoed when the client sends a sane one, generated otherwise; it is also the
 * correlation id of 500 errors and of every log line of the request.
 */

import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const SAFE_ID = /^[A-Za-z0-9._:@-]{1,128}$/

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID()
}
