import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { defaultClientId, parseMqttSettings, payloadToRows } from './mqtt-connector.js'

const columns = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'temp', type: 'real' },
  { name: 'topic', type: 'string' },
]
const at = Date.parse('2026-03-01T10:00:00Z')
const bytes = (text: string) => Buffer.from(text, 'utf8')

describe('mqtt connector: the payload mapping', () => {
  const settings = { topicColumn: 'topic', timeColumn: 'timestamp' }

  it('maps an object to one row: declared fields by name, the topic, the arrival time when missing', () => {
    assert.deepEqual(payloadToRows(settings, columns, 'a/b', bytes('{"temp": 1.5, "other": true}'), at), {
      rows: [{ temp: 1.5, topic: 'a/b', timestamp: '2026-03-01T10:00:00.000Z' }],
    })
    assert.deepEqual(payloadToRows(settings, columns, 'a/b', bytes('{"temp": 1, "timestamp": "2026-01-01T00:00:00Z"}'), at).rows, [
      { temp: 1, timestamp: '2026-01-01T00:00:00Z', topic: 'a/b' },
    ])
  })

  it('keeps integers beyond 2^53 exact, in a long field and inside a dynamic one (issue 17 item 1)', () => {
    const wide = [...columns, { name: 'n', type: 'long' }, { name: 'd', type: 'dynamic' }]
    const payload = '{"temp": 0.5, "n": 9007199254740993, "d": {"id": -9223372036854775808, "v": [9007199254740993, 1.5]}}'
    assert.deepEqual(payloadToRows(settings, wide, 't', bytes(payload), at).rows, [
      {
        temp: 0.5,
        n: 9007199254740993n,
        d: { id: -9223372036854775808n, v: [9007199254740993n, 1.5] },
        topic: 't',
        timestamp: '2026-03-01T10:00:00.000Z',
      },
    ])
  })

  it('maps an array of objects to one row each', () => {
    assert.equal(payloadToRows(settings, columns, 't', bytes('[{"temp": 1}, {"temp": 2}]'), at).rows.length, 2)
  })

  it('reports payloads that are not JSON objects instead of throwing', () => {
    for (const payload of ['not json', '42', '[]', '[1, {"temp": 1}]', 'null']) {
      const result = payloadToRows(settings, columns, 't', bytes(payload), at)
      assert.deepEqual(result.rows, [])
      assert.match(result.problem!, /^message on t: the payload is not/)
    }
  })

  it('checks that topicColumn and timeColumn are declared, and derives a stable client id', () => {
    assert.throws(
      () => parseMqttSettings({ url: 'mqtt://h', topics: ['x'], topicColumn: 'nope' }, columns),
      /settings\.topicColumn names "nope"/,
    )
    assert.throws(() => parseMqttSettings({ url: 'http://h', topics: ['x'] }, columns), /settings\.url/)
    assert.equal(parseMqttSettings({ url: 'mqtt://h', topics: ['x'] }, columns).qos, 1)
    assert.equal(defaultClientId('s', 'w', 'l'), defaultClientId('s', 'w', 'l'))
    assert.notEqual(defaultClientId('s', 'w', 'l'), defaultClientId('s', 'w', 'l2'))
  })
})
