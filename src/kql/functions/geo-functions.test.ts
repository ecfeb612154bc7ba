import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { compileQuery } from '../compile-query.js'
import { KqlError } from '../kql-error.js'
import { EMPTY_SCHEMA } from '../schema.js'
import { azimuth, geohashBounds, geohashEncode, pointInPolygon, s2CellCenter, s2CellId, s2Token, sphereDistance } from './geo-functions.js'

const lon = fc.double({ min: -179.999, max: 179.999, noNaN: true })
const lat = fc.double({ min: -89.9, max: 89.9, noNaN: true })

describe('geo functions', () => {
  it('geohash: a point lies in the rectangle of its hash, whose center hashes back to the same hash', () => {
    fc.assert(
      fc.property(lon, lat, fc.integer({ min: 1, max: 12 }), (x, y, n) => {
        const hash = geohashEncode(x, y, n)
        const [x0, y0, x1, y1] = geohashBounds(hash)!
        assert.ok(x >= x0 && x <= x1 && y >= y0 && y <= y1)
        assert.equal(geohashEncode((x0 + x1) / 2, (y0 + y1) / 2, n), hash)
      }),
      { numRuns: 300 },
    )
  })

  it('S2: the center of a cell lies in that cell; the level is the token length that remains', () => {
    fc.assert(
      fc.property(lon, lat, fc.integer({ min: 0, max: 30 }), (x, y, level) => {
        const token = s2Token(s2CellId(x, y, level))
        const [cx, cy] = s2CellCenter(token)!
        assert.equal(s2Token(s2CellId(cx, cy, level)), token)
      }),
      { numRuns: 300 },
    )
    assert.equal(s2CellCenter('zz'), undefined)
    assert.equal(s2CellCenter('c'), undefined, 'face 6 does not exist')
  })

  it('distances and azimuths on the sphere', () => {
    assert.ok(Math.abs(sphereDistance(0, 0, 0, 1) - 111195.08) < 0.1, 'one degree of latitude on a 6,371,010 m sphere')
    assert.equal(azimuth(0, 0, 0, 10), 0)
    assert.ok(Math.abs(azimuth(0, 0, 10, 0)! - Math.PI / 2) < 1e-12)
    assert.equal(azimuth(0, 0, 180, 0), null, 'antipodal')
  })

  it('point in polygon: the smaller region of each ring, whatever its orientation; holes excluded', () => {
    const square = (x0: number, y0: number, size: number, ccw: boolean): number[][] => {
      const ring = [
        [x0, y0],
        [x0 + size, y0],
        [x0 + size, y0 + size],
        [x0, y0 + size],
        [x0, y0],
      ]
      return ccw ? ring : ring.reverse()
    }
    fc.assert(
      fc.property(
        fc.double({ min: -170, max: 160, noNaN: true }),
        fc.double({ min: -80, max: 70, noNaN: true }),
        fc.boolean(),
        (x0, y0, ccw) => {
          const polygon = { type: 'Polygon', coordinates: [square(x0, y0, 4, ccw), square(x0 + 1, y0 + 1, 1, !ccw)] }
          assert.equal(pointInPolygon(x0 + 0.5, y0 + 0.5, polygon), true)
          assert.equal(pointInPolygon(x0 + 1.5, y0 + 1.5, polygon), false, 'in the hole')
          assert.equal(pointInPolygon(x0 + 6, y0 + 2, polygon), false)
        },
      ),
      { numRuns: 200 },
    )
    assert.equal(pointInPolygon(0, 0, { type: 'Point', coordinates: [0, 0] }), undefined)
  })

  it('geo functions nobody implements fail as unsupported, by name', () => {
    assert.throws(
      () => compileQuery('print geo_point_to_h3cell(1, 2, 3)', EMPTY_SCHEMA, { dialect: 'sqlite' }),
      (e: unknown) =>
        e instanceof KqlError && e.kind === 'unsupported' && /geo_point_to_h3cell/.test(e.message) && e.position !== undefined,
    )
  })
})
