/**
 * @module
 * An AbortSignal that fires when the HTTP client goes away before its response is written, so
 * work done for that client (a running query: issue 15) stops instead of running to its cap.
 */
import type { FastifyReply } from 'fastify'

export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  const response = reply.raw
  // 'close' fires when the response finished or the connection closed; only the latter aborts
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new Error('the client disconnected'))
  })
  return controller.signal
}
