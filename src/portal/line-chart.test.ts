import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { chartDataOf, niceTicks, renderLineChart } from './line-chart.js'

const cols = (...pairs: [string, string][]) => pairs.map(([name, type]) => ({ name, type }))

describe('line chart', () => {
  it('plots a long beyond 2^53 (a bigint in the result) at its nearest double', () => {
    const rows = [
      { timestamp: '2026-01-01T00:00:00Z', n: 2n ** 60n },
      { timestamp: '2026-01-01T01:00:00Z', n: 5 },
    ]
    assert.deepEqual(chartDataOf(cols(['timestamp', 'datetime'], ['n', 'long']), rows)?.series[0]?.points, [
      { t: Date.parse('2026-01-01T00:00:00Z'), y: 2 ** 60 },
      { t: Date.parse('2026-01-01T01:00:00Z'), y: 5 },
    ])
  })
  it('needs a timestamp datetime column and a numeric column', () => {
    const rows = [
      { timestamp: '2026-01-01T00:00:00Z', v: 1 },
      { timestamp: '2026-01-01T01:00:00Z', v: 2 },
    ]
    assert.equal(chartDataOf(cols(['timestamp', 'string'], ['v', 'real']), rows), undefined)
    assert.equal(chartDataOf(cols(['time', 'datetime'], ['v', 'real']), rows), undefined)
    assert.equal(chartDataOf(cols(['timestamp', 'datetime'], ['v', 'string']), rows), undefined)
    assert.deepEqual(chartDataOf(cols(['timestamp', 'datetime'], ['v', 'real']), rows), {
      yLabel: 'v',
      series: [
        {
          name: 'v',
          points: [
            { t: Date.parse('2026-01-01T00:00:00Z'), y: 1 },
            { t: Date.parse('2026-01-01T01:00:00Z'), y: 2 },
          ],
        },
      ],
    })
  })

  it('splits lines by a string column with a few values, sorts points by time and skips nulls', () => {
    const rows = [
      { timestamp: '2026-01-01T02:00:00Z', sensor: 'b', v: 5 },
      { timestamp: '2026-01-01T01:00:00Z', sensor: 'a', v: 1 },
      { timestamp: '2026-01-01T00:00:00Z', sensor: 'a', v: 3 },
      { timestamp: '2026-01-01T03:00:00Z', sensor: 'b', v: null },
    ]
    const data = chartDataOf(cols(['timestamp', 'datetime'], ['sensor', 'string'], ['v', 'long']), rows)!
    assert.deepEqual(
      data.series.map((s) => [s.name, s.points.map((p) => p.y)]),
      [
        ['a', [3, 1]],
        ['b', [5]],
      ],
    )
  })

  it('one point is no chart', () => {
    assert.equal(chartDataOf(cols(['timestamp', 'datetime'], ['v', 'real']), [{ timestamp: '2026-01-01T00:00:00Z', v: 1 }]), undefined)
  })

  it('renders an accessible SVG with one polyline per series and a legend', () => {
    const rows = Array.from({ length: 24 }, (_, i) => ({
      timestamp: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
      temperature: 20 + Math.sin(i / 4),
      pressure: 1.2,
    }))
    const svg = renderLineChart(chartDataOf(cols(['timestamp', 'datetime'], ['temperature', 'real'], ['pressure', 'real']), rows)!).text
    assert.match(svg, /role="img" aria-label="Line chart of value over time \(UTC\), 2 lines, from 2026-01-01 00:00 to 2026-01-01 23:00"/)
    assert.equal(svg.match(/<polyline /g)?.length, 2)
    assert.equal(svg.match(/<circle /g)?.length, 48)
    assert.match(svg, /<li><span class="swatch swatch-0" aria-hidden="true"><\/span>temperature/)
    assert.doesNotMatch(svg, /NaN|undefined/)
  })

  it('nice ticks cover the range with round steps (property)', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }), (a, width) => {
        const ticks = niceTicks(a, a + width)
        return (
          ticks.length >= 2 && ticks.length <= 12 && ticks[0]! <= a && ticks[ticks.length - 1]! >= a + width - Math.abs(a + width) * 1e-9
        )
      }),
    )
  })
})
