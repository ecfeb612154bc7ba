/**
 * The live stream's filters against the configuration and the token's scopes (spec 4.3, 6).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ForbiddenError, InvalidInputError } from '../errors.js'
import { workspaceConfigSchema } from '../workspace-config/config-document.js'
import { parseSince } from './live-hub.js'
import { checkLiveSelection, liveConnections, liveSurfacesOf, parseNameList } from './live-selection.js'

const columns = [{ name: 'timestamp', type: 'datetime' }]
const config = workspaceConfigSchema.parse({
  connections: [
    { lookup: 'sensors', kind: 'push', table: 'Sensors', columns },
    { lookup: 'meters', kind: 'push', table: 'Meters', columns },
    { lookup: 'valves', kind: 'push', table: 'Valves', columns },
  ],
  surfaces: [
    { lookup: 'hall', connections: ['sensors', 'valves'] },
    { lookup: 'yard', connections: ['meters', 'valves'] },
  ],
})

describe('live stream selection', () => {
  it('parses comma lists: trims, drops empty items and duplicates; an empty list is no filter', () => {
    assert.deepEqual(parseNameList(' a, b,,a '), ['a', 'b'])
    assert.equal(parseNameList(' , '), undefined)
    assert.equal(parseNameList(undefined), undefined)
  })

  it('refuses an unknown name with 400 and a name outside the scopes with 403, naming it', () => {
    assert.throws(
      () => checkLiveSelection(config, {}, { connections: ['sensors', 'pumps'] }),
      (e) => e instanceof InvalidInputError && /unknown connection "pumps"/.test(e.message),
    )
    assert.throws(
      () => checkLiveSelection(config, {}, { surfaces: ['attic'] }),
      (e) => e instanceof InvalidInputError && /unknown surface "attic"/.test(e.message),
    )
    assert.throws(
      () => checkLiveSelection(config, { connections: ['sensors'] }, { connections: ['meters'] }),
      (e) => e instanceof ForbiddenError && /"meters"/.test(e.message),
    )
    assert.throws(() => checkLiveSelection(config, { surfaces: ['hall'] }, { connections: ['meters'] }), ForbiddenError)
    assert.throws(
      () => checkLiveSelection(config, { surfaces: ['hall'] }, { surfaces: ['yard'] }),
      (e) => e instanceof ForbiddenError && /"yard"/.test(e.message),
    )
    assert.deepEqual(checkLiveSelection(config, { surfaces: ['hall'] }, { connections: ['valves'] }), { connections: ['valves'] })
  })

  it('streams the allowed connections, narrowed by both filters', () => {
    const set = (s: Set<string>) => [...s].sort()
    assert.deepEqual(set(liveConnections(config, {}, {})), ['meters', 'sensors', 'valves'])
    assert.deepEqual(set(liveConnections(config, {}, { surfaces: ['hall'] })), ['sensors', 'valves'])
    assert.deepEqual(set(liveConnections(config, {}, { surfaces: ['hall'], connections: ['valves', 'meters'] })), ['valves'])
    assert.deepEqual(set(liveConnections(config, { surfaces: ['yard'] }, {})), ['meters', 'valves'])
    assert.deepEqual(set(liveConnections(config, { connections: ['sensors', 'meters'], surfaces: ['yard'] }, {})), ['meters'])
  })

  it('names the surfaces holding a connection that the token may see', () => {
    assert.deepEqual(liveSurfacesOf(config, {}, 'valves'), ['hall', 'yard'])
    assert.deepEqual(liveSurfacesOf(config, { surfaces: ['yard'] }, 'valves'), ['yard'])
    assert.deepEqual(liveSurfacesOf(config, {}, 'nowhere'), [])
  })

  it('parses since as a whole number, refusing anything else', () => {
    assert.equal(parseSince('42'), 42)
    assert.equal(parseSince(' 0 '), 0)
    assert.equal(parseSince(''), undefined)
    for (const bad of ['-1', '1.5', 'abc', '1e3', '9'.repeat(16)]) assert.throws(() => parseSince(bad), InvalidInputError, bad)
  })
})
