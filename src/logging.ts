/**
 * @module
 * The process logger (pino). Secrets never reach a log line: authorization and cookie headers are
 * redacted, request URLs are logged without their query string (download URLs carry signatures),
 * and known secret-bearing fields are censored wherever they appear. On top of those known paths,
 * every line passes through the process-wide secret scrubber (shared/secret-scrubber.ts): any
 * credential value the server has seen is replaced wherever it shows up (design §11).
 */
import pino, { type Logger } from 'pino'
import { scrub } from './shared/secret-scrubber.js'

export { registerSecret, scrub } from './shared/secret-scrubber.js'

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
  '*.passwd',
  '*.pass',
  '*.apiKey',
  '*.api_key',
  '*.accessToken',
  '*.access_token',
  '*.refreshToken',
  '*.privateKey',
  '*.connectionString',
  '*.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["proxy-authorization"]',
  'password',
  'token',
  'secret',
  'credentials',
  'values',
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
      // Value-based scrubbing of the finished line: catches a secret quoted inside a message or an
      // error (e.g. a driver error repeating a connection string), which no path can name.
      hooks: { streamWrite: (line: string) => scrub(line) },
      serializers: {
        req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({
          method: req.method,
          url: pathOnly(req.url),
          id: req.id,
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  )
}
