import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { createLogger, registerSecret } from './logging.js'

describe('logger redaction (design §11)', () => {
  const capture = () => {
    const lines: string[] = []
    return {
      lines,
      logger: createLogger('info', {
        write: (line: string) => {
          lines.push(line)
        },
      }),
    }
  }

  it('censors known secret-bearing fields wherever they sit', () => {
    const { lines, logger } = capture()
    logger.info(
      {
        password: 'hunter2-a',
        source: { password: 'hunter2-b', connectionString: 'postgres://u:hunter2-c@h/db', user: 'reader' },
        req: { headers: { authorization: 'Bearer hunter2-d' } },
      },
      'connecting',
    )
    const line = lines.join('')
    for (const s of ['hunter2-a', 'hunter2-b', 'hunter2-c', 'hunter2-d']) assert.equal(line.includes(s), false, line)
    assert.match(line, /"user":"reader"/)
    assert.match(line, /\[REDACTED\]/)
  })

  it('scrubs a registered value from messages and errors, in any field', () => {
    const { lines, logger } = capture()
    const secret = `v-${randomBytes(10).toString('hex')}`
    registerSecret(secret)
    logger.error(
      { err: new Error(`auth failed for ${secret}`), detail: { note: `dsn=x:${encodeURIComponent(secret)}@h` } },
      `connector failed: ${secret}`,
    )
    const line = lines.join('')
    assert.equal(line.includes(secret), false, line)
    assert.match(line, /connector failed: \[REDACTED\]/)
    assert.match(line, /auth failed for \[REDACTED\]/)
  })
})
