/**
 * @module
 * KQL geospatial functions that are pure math (see ./README.md): distances, azimuth, circles and
 * polygons on a sphere (Kusto's geodetic datum: a sphere of radius 6,371,010 m, as the S2 library,
 * with geodesic edges), geohash and S2 cell encoding. Points are GeoJSON `[longitude, latitude]`.
 * Invalid coordinates give null (an empty string for the encoders), as documented. Geo functions
 * not listed here fail with an 'unsupported' error naming them (binder).
 */
import type { DynamicValue, KqlValue } from '../types.js'
import { defineScalar, dynamicReader, integerReader, numberReader, textReader } from './function-definitions.js'
import type { ScalarFunction } from './function-types.js'

/** Earth's radius as the S2 library (and so Kusto) uses it; pinned by the documented Seattle–LA distance. */
export const EARTH_RADIUS_METERS = 6371010

const RAD = Math.PI / 180

type Vec = readonly [number, number, number]

const validLon = (x: number | null): x is number => x !== null && Number.isFinite(x) && x >= -180 && x <= 180
const validLat = (y: number | null): y is number => y !== null && Number.isFinite(y) && y >= -90 && y <= 90

function toVec(lon: number, lat: number): Vec {
  const phi = lat * RAD
  const lambda = lon * RAD
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)]
}

const dot = (a: Vec, b: Vec): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
const cross = (a: Vec, b: Vec): Vec => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
const norm = (a: Vec): number => Math.hypot(a[0], a[1], a[2])

/** The angle between two unit vectors, accurate for tiny and near-antipodal angles. */
function angleBetween(a: Vec, b: Vec): number {
  return Math.atan2(norm(cross(a, b)), dot(a, b))
}

/** Great-circle distance in meters on the sphere. */
export function sphereDistance(lon1: number, lat1: number, lon2: number, lat2: number): number {
  return EARTH_RADIUS_METERS * angleBetween(toVec(lon1, lat1), toVec(lon2, lat2))
}

/** Geodesic distance on the WGS-84 spheroid (Vincenty's inverse formula; null if it does not converge). */
export function spheroidDistance(lon1: number, lat1: number, lon2: number, lat2: number): number | null {
  const a = 6378137
  const f = 1 / 298.257223563
  const b = a * (1 - f)
  const L = (lon2 - lon1) * RAD
  const U1 = Math.atan((1 - f) * Math.tan(lat1 * RAD))
  const U2 = Math.atan((1 - f) * Math.tan(lat2 * RAD))
  const sinU1 = Math.sin(U1),
    cosU1 = Math.cos(U1),
    sinU2 = Math.sin(U2),
    cosU2 = Math.cos(U2)
  let lambda = L
  for (let iter = 0; iter < 200; iter++) {
    const sinL = Math.sin(lambda),
      cosL = Math.cos(lambda)
    const sinSigma = Math.hypot(cosU2 * sinL, cosU1 * sinU2 - sinU1 * cosU2 * cosL)
    if (sinSigma === 0) return 0
    const cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosL
    const sigma = Math.atan2(sinSigma, cosSigma)
    const sinAlpha = (cosU1 * cosU2 * sinL) / sinSigma
    const cos2Alpha = 1 - sinAlpha * sinAlpha
    const cos2SigmaM = cos2Alpha === 0 ? 0 : cosSigma - (2 * sinU1 * sinU2) / cos2Alpha
    const C = (f / 16) * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
    const prev = lambda
    lambda = L + (1 - C) * f * sinAlpha * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
    if (Math.abs(lambda - prev) < 1e-12) {
      const u2 = (cos2Alpha * (a * a - b * b)) / (b * b)
      const A = 1 + (u2 / 16384) * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
      const B = (u2 / 1024) * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
      const deltaSigma =
        B *
        sinSigma *
        (cos2SigmaM +
          (B / 4) *
            (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) -
              (B / 6) * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
      return b * A * (sigma - deltaSigma)
    }
  }
  return null
}

/** Initial bearing from point 1 to point 2, clockwise from north, in [0, 2π); null for equal or antipodal points. */
export function azimuth(lon1: number, lat1: number, lon2: number, lat2: number): number | null {
  const a = toVec(lon1, lat1)
  const b = toVec(lon2, lat2)
  const angle = angleBetween(a, b)
  if (angle < 1e-15 || Math.PI - angle < 1e-15) return null
  const phi1 = lat1 * RAD,
    phi2 = lat2 * RAD,
    dl = (lon2 - lon1) * RAD
  const theta = Math.atan2(Math.sin(dl) * Math.cos(phi2), Math.cos(phi1) * Math.sin(phi2) - Math.sin(phi1) * Math.cos(phi2) * Math.cos(dl))
  return theta < 0 ? theta + 2 * Math.PI : theta
}

// ---------------------------------------------------------------------------------------------
// Polygons (GeoJSON Polygon / MultiPolygon, geodesic edges, each ring the smaller of its two regions)
// ---------------------------------------------------------------------------------------------

/** A ring's vertices (closing vertex dropped), or undefined when the ring is invalid. */
function ringOf(ring: DynamicValue): Vec[] | undefined {
  if (!Array.isArray(ring) || ring.length < 4) return undefined
  const points: [number, number][] = []
  for (const p of ring) {
    if (!Array.isArray(p) || p.length < 2 || typeof p[0] !== 'number' || typeof p[1] !== 'number') return undefined
    if (!validLon(p[0]) || !validLat(p[1])) return undefined
    points.push([p[0], p[1]])
  }
  const first = points[0]!
  const last = points[points.length - 1]!
  if (first[0] !== last[0] || first[1] !== last[1]) return undefined
  return points.slice(0, -1).map(([lon, lat]) => toVec(lon, lat))
}

/** Signed area (steradians, left of the ring) reduced to [0, 4π), from triangles on a reference point. */
function leftArea(ring: readonly Vec[]): number {
  const sum: [number, number, number] = [0, 0, 0]
  for (const v of ring) {
    sum[0] += v[0]
    sum[1] += v[1]
    sum[2] += v[2]
  }
  const n = norm(sum)
  const r: Vec = n > 1e-12 ? [sum[0] / n, sum[1] / n, sum[2] / n] : ring[0]!
  let area = 0
  for (let i = 0; i < ring.length; i++) {
    const a = ring[i]!
    const b = ring[(i + 1) % ring.length]!
    // Van Oosterom–Strackee: signed solid angle of the triangle (r, a, b)
    area += 2 * Math.atan2(dot(r, cross(a, b)), 1 + dot(r, a) + dot(a, b) + dot(b, r))
  }
  const full = 4 * Math.PI
  return ((area % full) + full) % full
}

/** How many times the ring winds around the axis through p (signed: +1 counterclockwise seen from outside). */
function winding(ring: readonly Vec[], p: Vec): number {
  let total = 0
  for (let i = 0; i < ring.length; i++) {
    const a = ring[i]!
    const b = ring[(i + 1) % ring.length]!
    // the direction of a point moving along the geodesic a→b, seen from p, sweeps this angle
    total += Math.atan2(dot(p, cross(a, b)), dot(a, b) - dot(a, p) * dot(b, p))
  }
  return Math.round(total / (2 * Math.PI))
}

/** Whether p lies in the smaller of the two regions the ring divides the sphere into. */
function inRing(ring: readonly Vec[], p: Vec): boolean {
  const smallerIsLeft = leftArea(ring) <= 2 * Math.PI
  const w = winding(ring, p)
  return smallerIsLeft ? w === 1 : w === -1
}

/** Point in a GeoJSON Polygon or MultiPolygon; undefined when the shape is invalid. */
export function pointInPolygon(lon: number, lat: number, shape: DynamicValue): boolean | undefined {
  if (shape === null || typeof shape !== 'object' || Array.isArray(shape)) return undefined
  const type = shape['type']
  const coordinates = shape['coordinates']
  if (!Array.isArray(coordinates)) return undefined
  const polygons = type === 'Polygon' ? [coordinates] : type === 'MultiPolygon' ? coordinates : undefined
  if (!polygons || polygons.length === 0) return undefined
  const p = toVec(lon, lat)
  let inside = false
  for (const polygon of polygons) {
    if (!Array.isArray(polygon) || polygon.length === 0) return undefined
    const rings: Vec[][] = []
    for (const r of polygon) {
      const ring = ringOf(r)
      if (!ring) return undefined
      rings.push(ring)
    }
    if (!inside && inRing(rings[0]!, p) && !rings.slice(1).some((hole) => inRing(hole, p))) inside = true
  }
  return inside
}

// ---------------------------------------------------------------------------------------------
// Geohash
// ---------------------------------------------------------------------------------------------

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz'

/** A geohash cell's extent on one axis, [low, high]; the bits halve longitude and latitude in turn. */
type Span = [number, number]

/** Keeps the upper or the lower half of a span, as one geohash bit says. */
function halve(span: Span, upper: boolean): void {
  const mid = (span[0] + span[1]) / 2
  if (upper) span[0] = mid
  else span[1] = mid
}

export function geohashEncode(lon: number, lat: number, length: number): string {
  const lonSpan: Span = [-180, 180]
  const latSpan: Span = [-90, 90]
  let out = ''
  let bits = 0
  let value = 0
  let even = true
  while (out.length < length) {
    const span = even ? lonSpan : latSpan
    const upper = (even ? lon : lat) >= (span[0] + span[1]) / 2
    halve(span, upper)
    value = value * 2 + (upper ? 1 : 0)
    even = !even
    if (++bits === 5) {
      out += BASE32[value]
      bits = 0
      value = 0
    }
  }
  return out
}

/** The rectangle of a geohash: [lonLo, latLo, lonHi, latHi], or undefined when invalid. */
export function geohashBounds(hash: string): [number, number, number, number] | undefined {
  if (hash.length < 1 || hash.length > 18) return undefined
  const lonSpan: Span = [-180, 180]
  const latSpan: Span = [-90, 90]
  let even = true
  for (const ch of hash) {
    const v = BASE32.indexOf(ch)
    if (v < 0) return undefined
    for (let bit = 4; bit >= 0; bit--) {
      halve(even ? lonSpan : latSpan, ((v >> bit) & 1) === 1)
      even = !even
    }
  }
  return [lonSpan[0], latSpan[0], lonSpan[1], latSpan[1]]
}

const point = (lon: number, lat: number): DynamicValue => ({ type: 'Point', coordinates: [lon, lat] })

/** Neighbors in the order Kusto lists them: SW, NW, SE, N, W, NE, E, S (documentation example). */
const NEIGHBOR_OFFSETS: readonly (readonly [number, number])[] = [
  [-1, -1],
  [-1, 1],
  [1, -1],
  [0, 1],
  [-1, 0],
  [1, 1],
  [1, 0],
  [0, -1],
]

function geohashNeighbors(hash: string): string[] | undefined {
  const b = geohashBounds(hash)
  if (!b) return undefined
  const [lonLo, latLo, lonHi, latHi] = b
  const w = lonHi - lonLo
  const h = latHi - latLo
  const cx = (lonLo + lonHi) / 2
  const cy = (latLo + latHi) / 2
  const out: string[] = []
  for (const [dx, dy] of NEIGHBOR_OFFSETS) {
    const y = cy + dy * h
    if (y > 90 || y < -90) continue
    let x = cx + dx * w
    if (x > 180) x -= 360
    if (x < -180) x += 360
    out.push(geohashEncode(x, y, hash.length))
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// S2 cells (the S2 geometry library's cell ids: cube face, quadratic projection, Hilbert curve)
// ---------------------------------------------------------------------------------------------

const MAX_LEVEL = 30
const MAX_SIZE = 1 << MAX_LEVEL
/** Hilbert curve position of (i, j) bits per orientation, and the orientation change per position. */
const IJ_TO_POS = [
  [0, 1, 3, 2],
  [0, 3, 1, 2],
  [2, 3, 1, 0],
  [2, 1, 3, 0],
] as const
const POS_TO_IJ = [
  [0, 1, 3, 2],
  [0, 2, 3, 1],
  [3, 2, 0, 1],
  [3, 1, 0, 2],
] as const
const POS_TO_ORIENTATION = [1, 0, 0, 3] as const

function faceUv(v: Vec): [number, number, number] {
  const ax = Math.abs(v[0]),
    ay = Math.abs(v[1]),
    az = Math.abs(v[2])
  let face = ax > ay ? (ax > az ? 0 : 2) : ay > az ? 1 : 2
  if (v[face]! < 0) face += 3
  const [x, y, z] = v
  switch (face) {
    case 0:
      return [0, y / x, z / x]
    case 1:
      return [1, -x / y, z / y]
    case 2:
      return [2, -x / z, -y / z]
    case 3:
      return [3, z / x, y / x]
    case 4:
      return [4, z / y, -x / y]
    default:
      return [5, -y / z, -x / z]
  }
}

function uvToXyz(face: number, u: number, v: number): Vec {
  switch (face) {
    case 0:
      return [1, u, v]
    case 1:
      return [-u, 1, v]
    case 2:
      return [-u, -v, 1]
    case 3:
      return [-1, -v, -u]
    case 4:
      return [v, -1, -u]
    default:
      return [v, u, -1]
  }
}

const uvToSt = (u: number): number => (u >= 0 ? 0.5 * Math.sqrt(1 + 3 * u) : 1 - 0.5 * Math.sqrt(1 - 3 * u))
const stToUv = (s: number): number => (s >= 0.5 ? (1 / 3) * (4 * s * s - 1) : (1 / 3) * (1 - 4 * (1 - s) * (1 - s)))
const stToIj = (s: number): number => Math.max(0, Math.min(MAX_SIZE - 1, Math.floor(MAX_SIZE * s)))

/** The S2 cell id (64 bits) of a point at a level. */
export function s2CellId(lon: number, lat: number, level: number): bigint {
  const [face, u, v] = faceUv(toVec(lon, lat))
  const i = stToIj(uvToSt(u))
  const j = stToIj(uvToSt(v))
  let orientation = face & 1
  let pos = 0n
  for (let k = MAX_LEVEL - 1; k >= 0; k--) {
    const ij = (((i >> k) & 1) << 1) | ((j >> k) & 1)
    const p = IJ_TO_POS[orientation]![ij]!
    pos = (pos << 2n) | BigInt(p)
    orientation ^= POS_TO_ORIENTATION[p]!
  }
  const leaf = (BigInt(face) << 61n) | (pos << 1n) | 1n
  const lsb = 1n << BigInt(2 * (MAX_LEVEL - level))
  return (leaf & -lsb) | lsb
}

export function s2Token(id: bigint): string {
  const hex = id.toString(16).padStart(16, '0')
  return hex.replace(/0+$/, '') || 'X'
}

/** The center of an S2 cell token as [lon, lat], or undefined for an invalid token. */
export function s2CellCenter(token: string): [number, number] | undefined {
  if (!/^[0-9a-f]{1,16}$/.test(token)) return undefined
  const id = BigInt(`0x${token.padEnd(16, '0')}`)
  if (id === 0n) return undefined
  const face = Number(id >> 61n)
  if (face > 5) return undefined
  let lsbIndex = 0
  while (((id >> BigInt(lsbIndex)) & 1n) === 0n) lsbIndex++
  if (lsbIndex % 2 !== 0) return undefined
  const level = MAX_LEVEL - lsbIndex / 2
  let orientation = face & 1
  let i = 0
  let j = 0
  for (let k = MAX_LEVEL - 1; k >= MAX_LEVEL - level; k--) {
    const p = Number((id >> BigInt(2 * k + 1)) & 3n)
    const ij = POS_TO_IJ[orientation]![p]!
    i |= (ij >> 1) << k
    j |= (ij & 1) << k
    orientation ^= POS_TO_ORIENTATION[p]!
  }
  const size = 2 ** (MAX_LEVEL - level)
  const s = (i + size / 2) / MAX_SIZE
  const t = (j + size / 2) / MAX_SIZE
  const v = uvToXyz(face, stToUv(s), stToUv(t))
  const n = norm(v)
  const lat = Math.asin(v[2] / n) / RAD
  const lon = Math.atan2(v[1], v[0]) / RAD
  return [lon, lat]
}

// ---------------------------------------------------------------------------------------------
// The functions
// ---------------------------------------------------------------------------------------------

function coordinates(read: ((values: readonly KqlValue[]) => number | null)[], values: readonly KqlValue[]): number[] | undefined {
  const out: number[] = []
  for (let k = 0; k < read.length; k++) {
    const x = read[k]!(values)
    if (k % 2 === 0 ? !validLon(x) : !validLat(x)) return undefined
    out.push(x as number)
  }
  return out
}

const distance2Points = defineScalar({
  name: 'geo_distance_2points',
  params: ['number', 'number', 'number', 'number', 'bool'],
  min: 4,
  result: 'real',
  bind: (args) => {
    const read = [0, 1, 2, 3].map((i) => numberReader(args, i))
    const spheroid = args[4] ? (values: readonly KqlValue[]) => values[4] === true : () => false
    return (values) => {
      const c = coordinates(read, values)
      if (!c) return null
      return spheroid(values) ? spheroidDistance(c[0]!, c[1]!, c[2]!, c[3]!) : sphereDistance(c[0]!, c[1]!, c[2]!, c[3]!)
    }
  },
})

const pointInCircle = defineScalar({
  name: 'geo_point_in_circle',
  params: ['number', 'number', 'number', 'number', 'number'],
  result: 'bool',
  bind: (args) => {
    const read = [0, 1, 2, 3].map((i) => numberReader(args, i))
    const radius = numberReader(args, 4)
    return (values) => {
      const c = coordinates(read, values)
      const r = radius(values)
      if (!c || r === null || !(r > 0) || !Number.isFinite(r)) return null
      // a spherical cap: the radius is measured along the surface
      return sphereDistance(c[0]!, c[1]!, c[2]!, c[3]!) <= r
    }
  },
})

const pointInPolygonFn = defineScalar({
  name: 'geo_point_in_polygon',
  params: ['number', 'number', 'dynamic'],
  result: 'bool',
  bind: (args) => {
    const read = [0, 1].map((i) => numberReader(args, i))
    const shape = dynamicReader(args, 2)
    return (values) => {
      const c = coordinates(read, values)
      if (!c) return null
      return pointInPolygon(c[0]!, c[1]!, shape(values)) ?? null
    }
  },
})

const azimuthFn = defineScalar({
  name: 'geo_azimuth',
  params: ['number', 'number', 'number', 'number'],
  result: 'real',
  bind: (args) => {
    const read = [0, 1, 2, 3].map((i) => numberReader(args, i))
    return (values) => {
      const c = coordinates(read, values)
      return c ? azimuth(c[0]!, c[1]!, c[2]!, c[3]!) : null
    }
  },
})

/** geo_point_to_geohash / geo_point_to_s2cell: the cell's code at a level in [min, max], "" for invalid input. */
function pointToCell(
  name: string,
  levels: { readonly fallback: number; readonly min: number; readonly max: number },
  encode: (longitude: number, latitude: number, level: number) => string,
): ScalarFunction {
  return defineScalar({
    name,
    params: ['number', 'number', 'integer'],
    min: 2,
    result: 'string',
    bind: (args) => {
      const read = [0, 1].map((i) => numberReader(args, i))
      const level = integerReader(args, 2, levels.fallback)
      return (values) => {
        const c = coordinates(read, values)
        const n = level(values)
        if (!c || n === null || n < levels.min || n > levels.max) return ''
        return encode(c[0]!, c[1]!, n)
      }
    },
  })
}

const pointToGeohash = pointToCell('geo_point_to_geohash', { fallback: 5, min: 1, max: 18 }, geohashEncode)

/** A function of a cell's text (a geohash, an S2 token) to a value; null where the text names no cell. */
function ofCellText(name: string, of: (text: string) => DynamicValue | undefined): ScalarFunction {
  return defineScalar({
    name,
    params: ['string'],
    result: 'dynamic',
    bind: (args) => {
      const text = textReader(args, 0)
      return (values) => of(text(values)) ?? null
    },
  })
}

const geohashToCentralPoint = ofCellText('geo_geohash_to_central_point', (hash) => {
  const b = geohashBounds(hash)
  return b && point((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
})

const geohashToPolygon = ofCellText('geo_geohash_to_polygon', (hash) => {
  const b = geohashBounds(hash)
  if (!b) return undefined
  const [x0, y0, x1, y1] = b
  return {
    type: 'Polygon',
    coordinates: [
      [
        [x0, y0],
        [x1, y0],
        [x1, y1],
        [x0, y1],
        [x0, y0],
      ],
    ],
  }
})

const geohashNeighborsFn = ofCellText('geo_geohash_neighbors', geohashNeighbors)

const pointToS2Cell = pointToCell('geo_point_to_s2cell', { fallback: 11, min: 0, max: 30 }, (lon, lat, n) => s2Token(s2CellId(lon, lat, n)))

const s2CellToCentralPoint = ofCellText('geo_s2cell_to_central_point', (token) => {
  const c = s2CellCenter(token)
  return c && point(c[0], c[1])
})

export const geoFunctions: readonly ScalarFunction[] = [
  distance2Points,
  pointInCircle,
  pointInPolygonFn,
  azimuthFn,
  pointToGeohash,
  geohashToCentralPoint,
  geohashToPolygon,
  geohashNeighborsFn,
  pointToS2Cell,
  s2CellToCentralPoint,
]
