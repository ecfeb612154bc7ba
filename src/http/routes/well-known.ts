/**
 * @module
 * Unauthenticated documents outside /oi-api: the activity log's checkpoint verifier key (issue 4,
 * item 7). Auditors need it without a token, to check checkpoints and exports offline
 * (`provenant verify-export FILE --public-key K`). It is public by nature: it only verifies.
 *
 *     GET /.well-known/provenant/activity-log-key       JSON (below)
 *     GET /.well-known/provenant/activity-log-key.txt   the verifier key alone, one line
 */
import type { FastifyInstance } from 'fastify'
import type { ApiServices } from '../../domain/services.js'

export const ACTIVITY_LOG_KEY_PATH = '/.well-known/provenant/activity-log-key'

export function registerWellKnownRoutes(app: FastifyInstance, services: ApiServices): void {
  app.get(ACTIVITY_LOG_KEY_PATH, async (_request, reply) => {
    const key = services.ledger.publicKey()
    reply.header('cache-control', 'public, max-age=300')
    return {
      keyName: key.keyName,
      verifierKey: key.verifierKey,
      algorithm: 'Ed25519',
      publicKey: key.publicKey,
      format: 'C2SP signed-note (c2sp.org/signed-note); checkpoints follow c2sp.org/tlog-checkpoint',
      origins: `${key.logName}/activity-log/<workspace id>/<container id>`,
      trustedVerifierKeys: services.ledger.trustedKeys().map((k) => k.vkey),
    }
  })
  app.get(`${ACTIVITY_LOG_KEY_PATH}.txt`, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300').type('text/plain; charset=utf-8')
    return `${services.ledger.publicKey().verifierKey}\n`
  })
}
