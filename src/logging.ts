/**
 * @module
 * The process logger (pino). Secrets never reach a log line: authorization and cookie headers are
 * redacted, request URLs are logged without their query string (download URLs carry signatures),
 * and known secret-bearing fields are censored wherever they appear.
 */
import pino, { type Logger } from 'pino'

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["sec-websocket-protocol"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.credentials',
  '*.authorization',
  'err.config',
]

function pathOnly(url: string | undefined): string | undefined {
  return url?.split('?')[0]
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({ method: req.method, url: pathOnly(req.url), id: req.id, remoteAddress: req.ip }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  )
}
