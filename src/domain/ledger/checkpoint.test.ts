import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import {
  CheckpointError,
  type CheckpointErrorCode,
  checkpointOrigin,
  formatCheckpointBody,
  headsLogRecordBody,
  openCheckpoint,
  parseCheckpointBody,
  parseHeadsLogEntry,
  signCheckpoint,
} from './checkpoint.js'
import { createCompactRange } from './merkle.js'
import { createNoteSigner, ed25519PrivateKeyFromSeed, generateSigningKey, parseVerifierKey, signNote } from './signed-note.js'

// Known answers (docs/design/ledger.md §5), cross-checked with Python's `cryptography` Ed25519.
const SEED = createHash('sha256').update('provenant known-answer test key').digest()
const KEY = ed25519PrivateKeyFromSeed(SEED)
const SIGNER = createNoteSigner('provenant.example/activity-log', KEY)
const VKEY = 'provenant.example/activity-log+1b243d94+AcgQYW4HKo09LiZcxffoOfyu9kRtQG5P8MAjaXoSF1I2'
const TRUSTED = [parseVerifierKey(VKEY)]
const ORIGIN = 'provenant.example/activity-log/wks_demo/scope%3Aplant-7%2Fline-1'
const RECORD_DIGESTS = [
  'f39ab0efa31f4c9e11d76fc41dff10b8c93c340c4af37379f30a64f2aebce1e8',
  '52e61920b020819e31c704f4c848f6d58df10e4ed249693c52b225cfdd546086',
  '025bbb410a05dbc78ba2a70f924d777dd9f9c3b0ad6ccacf063d5f8e911d5226',
]
const ROOT_3 = '0660e41149016bad7a300790799a95f1c1a47d769c0e8d5f21deec7621bdee2f'
const NOTE_3 =
  'provenant.example/activity-log/wks_demo/scope%3Aplant-7%2Fline-1\n3\nBmDkEUkBa616MAeQeZqV8cGkfXacDo1fId7sdiG97i8=\n\n' +
  '— provenant.example/activity-log GyQ9lNgOn3VJRw1avhm85Ll4/SZQuhwwnlrLeD+MvJepaLP6czKOD50i5CxpnrgrKr8s3IOHWl/8LA4EV3FZrjnHpA4=\n' +
  '— provenant.example/activity-log 1EPVewAAAABpVbkCObX+dtFhEtoHcr+ozGPEvPyrmuUqEkj2ehaUJ88LGQp90CT2ifhi86In3nKAZ/00T7ebxWTcdPF5HIGBQ3pYBQ==\n'

function throwsCheckpoint(fn: () => unknown, code: CheckpointErrorCode, message?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof CheckpointError, String(e))
    assert.equal(e.code, code, e.message)
    if (message) assert.match(e.message, message)
    return true
  })
}

describe('checkpoint: known answer', () => {
  it('origin, Merkle root of the three worked records, and the signed note byte for byte', () => {
    assert.equal(SIGNER.vkey, VKEY)
    assert.equal(checkpointOrigin('provenant.example', { workspaceId: 'wks_demo', containerId: 'scope:plant-7/line-1' }), ORIGIN)
    const cr = createCompactRange()
    for (const d of RECORD_DIGESTS) cr.append(Buffer.from(d, 'hex'))
    assert.equal(cr.root().toString('hex'), ROOT_3)
    assert.equal(signCheckpoint({ origin: ORIGIN, size: 3, root: cr.root() }, SIGNER, KEY, 1767225602), NOTE_3)
  })

  it('opens to origin, size, root, the cosigned time and the signer', () => {
    const cp = openCheckpoint(NOTE_3, TRUSTED, ORIGIN)
    assert.equal(cp.origin, ORIGIN)
    assert.equal(cp.size, 3)
    assert.equal(Buffer.from(cp.root).toString('hex'), ROOT_3)
    assert.equal(cp.time, 1767225602)
    assert.deepEqual(cp.signedBy, ['provenant.example/activity-log'])
  })
})

describe('checkpoint: origin', () => {
  it('is unique per workspace and container and free of spaces and plus signs', () => {
    const a = checkpointOrigin('h', { workspaceId: 'w', containerId: 'scope:a b+c' })
    assert.equal(a, 'h/activity-log/w/scope%3Aa%20b%2Bc')
    assert.notEqual(
      checkpointOrigin('h', { workspaceId: 'w/x', containerId: 'c' }),
      checkpointOrigin('h', { workspaceId: 'w', containerId: 'x/c' }),
    )
    assert.throws(() => checkpointOrigin('bad name', { workspaceId: 'w', containerId: 'c' }), /no spaces/)
  })
})

describe('checkpoint: body parsing is strict (C2SP tlog-checkpoint)', () => {
  const root = Buffer.alloc(32, 1).toString('base64')
  it('round-trips', () => {
    const body = { origin: 'o', size: 12, root: Buffer.alloc(32, 1) }
    assert.deepEqual(parseCheckpointBody(formatCheckpointBody(body)), body)
    assert.equal(parseCheckpointBody(`o\n0\n${root}\n`).size, 0)
  })
  const bad: [string, string, RegExp][] = [
    ['leading zero', `o\n010\n${root}\n`, /leading zeros/],
    ['plus sign', `o\n+10\n${root}\n`, /without sign/],
    ['minus sign', `o\n-1\n${root}\n`, /without sign/],
    ['space', `o\n 10\n${root}\n`, /decimal/],
    ['hex', `o\n0x10\n${root}\n`, /decimal/],
    ['too large', `o\n90071992547409930\n${root}\n`, /too large/],
    ['empty origin', `\n1\n${root}\n`, /empty origin/],
    ['missing root', 'o\n1\n', /expected origin, size and root/],
    ['short root', `o\n1\n${Buffer.alloc(31).toString('base64')}\n`, /32-byte/],
    ['unpadded root', `o\n1\n${root.replace(/=$/, '')}\n`, /base64/],
    ['url-safe root', `o\n1\n${Buffer.alloc(32, 0xfb).toString('base64url')}=\n`, /base64/],
    ['extension line', `o\n1\n${root}\ntime 5\n`, /extension lines/],
    ['no final newline', `o\n1\n${root}`, /end with a newline/],
  ]
  for (const [name, text, why] of bad) {
    it(`refuses ${name}`, () => throwsCheckpoint(() => parseCheckpointBody(text), 'malformed-checkpoint', why))
  }
})

describe('checkpoint: signatures', () => {
  const body = { origin: ORIGIN, size: 3, root: Buffer.from(ROOT_3, 'hex') }

  it('a checkpoint signed only by an unknown key is refused (attack 16), naming the key', () => {
    const stranger = generateSigningKey()
    const note = signCheckpoint(body, createNoteSigner('provenant.example/activity-log', stranger), stranger, 1)
    throwsCheckpoint(() => openCheckpoint(note, TRUSTED), 'untrusted', /no verifiable signatures \(signed only by unknown keys/)
  })

  it("another container's or workspace's checkpoint is refused when an origin is expected (attack 17)", () => {
    const other = signCheckpoint(
      { ...body, origin: checkpointOrigin('provenant.example', { workspaceId: 'wks_other', containerId: 'scope:plant-7/line-1' }) },
      SIGNER,
      KEY,
      1,
    )
    throwsCheckpoint(() => openCheckpoint(other, TRUSTED, ORIGIN), 'wrong-origin', /wks_other/)
    assert.equal(openCheckpoint(other, TRUSTED).size, 3)
  })

  it('any edit of size, root or origin breaks the trusted signature', () => {
    for (const edited of [NOTE_3.replace('\n3\n', '\n4\n'), NOTE_3.replace('BmDk', 'BmDl'), NOTE_3.replace('wks_demo', 'wks_demp')]) {
      throwsCheckpoint(() => openCheckpoint(edited, TRUSTED), 'invalid-signature')
    }
  })

  it('a root differing only in base64 letter case is a different root (raw bytes, never case-folded text)', () => {
    const lower = NOTE_3.replace('BmDkEUkBa616MAeQeZqV8cGkfXacDo1fId7sdiG97i8=', 'bmdkeukba616maeqezqv8cgkfxacdo1fid7sdig97i8=')
    throwsCheckpoint(() => openCheckpoint(lower, TRUSTED), 'invalid-signature')
  })

  it('without the cosignature line the checkpoint is valid and has no time', () => {
    const plain = signNote(formatCheckpointBody(body), [SIGNER])
    const cp = openCheckpoint(plain, TRUSTED)
    assert.equal(cp.time, null)
    assert.equal(cp.size, 3)
  })

  it("a cosignature alone is not the log's checkpoint signature", () => {
    const onlyCosig = NOTE_3.split('\n')
      .filter((l) => !l.includes('GyQ9lNgO'))
      .join('\n')
    throwsCheckpoint(() => openCheckpoint(onlyCosig, TRUSTED), 'untrusted', /no Ed25519 signature by a trusted key/)
  })

  it('malformed notes and bodies are refused as malformed', () => {
    throwsCheckpoint(() => openCheckpoint('not a note', TRUSTED), 'malformed-checkpoint')
    const badBody = signNote('o\n01\nAAAA\n', [SIGNER])
    throwsCheckpoint(() => openCheckpoint(badBody, TRUSTED), 'malformed-checkpoint', /leading zeros/)
  })
})

describe('heads log entries', () => {
  it('round-trip through a canonical record body', () => {
    const entry = { containerId: 'scope:plant-7/line-1', size: 3, root: Buffer.from(ROOT_3, 'hex') }
    const body = headsLogRecordBody(entry)
    assert.equal(
      body,
      '{"ScopeKey":null,"actionType":"checkpoint","details":{"root":"BmDkEUkBa616MAeQeZqV8cGkfXacDo1fId7sdiG97i8=","size":3},"entityId":"scope:plant-7/line-1","entityType":"container-checkpoint"}',
    )
    const back = parseHeadsLogEntry(body)
    assert.ok(back)
    assert.equal(back.containerId, entry.containerId)
    assert.equal(back.size, 3)
    assert.equal(Buffer.from(back.root).toString('hex'), ROOT_3)
  })
  it('anything else is not an entry', () => {
    assert.equal(parseHeadsLogEntry('{"entityType":"batch"}'), null)
    assert.equal(parseHeadsLogEntry('not json'), null)
    assert.equal(parseHeadsLogEntry('{"entityType":"container-checkpoint","entityId":"c","details":{"size":-1,"root":"AAAA"}}'), null)
  })
})

describe('docs/design/ledger.md carries the checkpoint known answer', () => {
  it('the vkey, root and every line of the signed note appear in the design page', async () => {
    const { readFile } = await import('node:fs/promises')
    const doc = await readFile(new URL('../../../docs/design/ledger.md', import.meta.url), 'utf8')
    for (const v of [VKEY, ROOT_3, ...NOTE_3.split('\n').filter((l) => l.length > 0)]) {
      assert.ok(doc.includes(v), `docs/design/ledger.md lacks ${v}`)
    }
  })
})
