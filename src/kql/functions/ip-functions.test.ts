import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { d, l, s, scalarCaller } from '../../../test/support/kql-function-calls.js'
import { KqlError } from '../kql-error.js'

const { bound, call } = scalarCaller()

describe('parse_ipv4, parse_ipv4_mask, ipv4_netmask_suffix', () => {
  it('follow the documented examples', () => {
    assert.deepEqual(bound('parse_ipv4', s('192.168.1.1')), { type: 'long', value: 3232235777 })
    assert.equal(call('parse_ipv4', s('192.168.1.1/24')), 3232235776)
    assert.equal(call('parse_ipv4', s('255.255.255.255/31')), 4294967294)
    assert.equal(call('parse_ipv4', s('256.1.1.1')), null)
    assert.equal(call('parse_ipv4', s('1.2.3')), null)
    assert.equal(call('parse_ipv4_mask', s('127.0.0.1'), l(24)), 2130706432)
    assert.equal(call('parse_ipv4_mask', s('127.0.0.1'), l(33)), null)
    assert.equal(call('ipv4_netmask_suffix', s('10.1.2.3')), 32)
    assert.equal(call('ipv4_netmask_suffix', s('192.168.1.1/24')), 24)
    assert.equal(call('ipv4_netmask_suffix', s('127.0.0.1/16')), 16)
    assert.equal(call('ipv4_netmask_suffix', s('x')), null)
  })
})

describe('format_ipv4, format_ipv4_mask', () => {
  it('follow the documented examples', () => {
    const rows: [string, number, string, string][] = [
      ['192.168.1.1', 24, '192.168.1.0', '192.168.1.0/24'],
      ['192.168.1.1', 32, '192.168.1.1', '192.168.1.1/32'],
      ['192.168.1.1/24', 32, '192.168.1.0', '192.168.1.0/24'],
      ['192.168.1.1/24', -1, '', ''],
    ]
    for (const [address, mask, plain, cidr] of rows) {
      assert.equal(call('format_ipv4', s(address), l(mask)), plain)
      assert.equal(call('format_ipv4_mask', s(address), l(mask)), cidr)
    }
    assert.equal(call('format_ipv4', l(3232235777)), '192.168.1.1')
    assert.equal(call('format_ipv4_mask', l(3232235777)), '192.168.1.1/32')
  })
})

describe('ipv4_compare, ipv4_is_match, ipv4_is_in_range, ipv4_is_in_any_range, ipv4_is_private', () => {
  it('compare and match with prefixes', () => {
    for (const [a, b] of [
      ['192.168.1.0', '192.168.1.0'],
      ['192.168.1.1/24', '192.168.1.255'],
      ['192.168.1.1', '192.168.1.255/24'],
      ['192.168.1.1/30', '192.168.1.255/24'],
    ]) {
      assert.equal(call('ipv4_compare', s(a!), s(b!)), 0)
      assert.equal(call('ipv4_is_match', s(a!), s(b!)), true)
    }
    for (const [a, b, p] of [
      ['192.168.1.1', '192.168.1.0', 31],
      ['192.168.1.1/24', '192.168.1.255', 31],
      ['192.168.1.1', '192.168.1.255', 24],
    ] as const) {
      assert.equal(call('ipv4_compare', s(a), s(b), l(p)), 0)
      assert.equal(call('ipv4_is_match', s(a), s(b), l(p)), true)
    }
    assert.equal(call('ipv4_compare', s('192.168.1.1'), s('192.168.1.2')), -1)
    assert.equal(call('ipv4_compare', s('10.0.0.1'), s('9.0.0.1')), 1)
    assert.equal(call('ipv4_compare', s('x'), s('9.0.0.1')), null)
    assert.equal(call('ipv4_is_match', s('192.168.1.1'), s('192.168.1.2')), false)
  })
  it('ranges', () => {
    assert.equal(call('ipv4_is_in_range', s('192.168.1.1'), s('192.168.1.1')), true)
    assert.equal(call('ipv4_is_in_range', s('192.168.1.1'), s('192.168.1.255/24')), true)
    assert.equal(call('ipv4_is_in_range', s('192.168.2.1'), s('192.168.1.255/24')), false)
    assert.equal(call('ipv4_is_in_any_range', s('192.168.1.6'), s('192.168.1.1/24'), s('10.0.0.1/8'), s('127.1.0.1/16')), true)
    assert.equal(call('ipv4_is_in_any_range', s('127.0.0.1'), d(['127.0.0.1', '192.168.1.1'])), true)
    const nets = d(['192.168.1.1/16', '127.0.0.1/8', '10.0.0.1/8'])
    assert.deepEqual(
      ['10.1.2.3', '192.168.1.5', '123.1.11.21', '1.1.1.1'].map((ip) => call('ipv4_is_in_any_range', s(ip), nets)),
      [true, true, false, false],
    )
    assert.throws(() => call('ipv4_is_in_any_range', s('1.1.1.1'), l(5)), KqlError)
  })
  it('private networks', () => {
    assert.equal(call('ipv4_is_private', s('192.168.1.1/24')), true)
    assert.equal(call('ipv4_is_private', s('10.1.2.3/24')), true)
    assert.equal(call('ipv4_is_private', s('172.20.0.1')), true)
    assert.equal(call('ipv4_is_private', s('202.1.2.3')), false)
    assert.equal(call('ipv4_is_private', s('127.0.0.1')), false)
    assert.equal(call('ipv4_is_private', s('nope')), null)
  })
  it('ipv4_range_to_cidr_list', () => {
    assert.deepEqual(call('ipv4_range_to_cidr_list', s('1.1.128.0'), s('1.1.140.255')), ['1.1.128.0/21', '1.1.136.0/22', '1.1.140.0/24'])
    assert.deepEqual(call('ipv4_range_to_cidr_list', s('0.0.0.0'), s('255.255.255.255')), ['0.0.0.0/0'])
    assert.deepEqual(call('ipv4_range_to_cidr_list', s('10.0.0.5'), s('10.0.0.5')), ['10.0.0.5/32'])
  })
})

describe('IPv6', () => {
  it('parse_ipv6 and parse_ipv6_mask follow the documented examples', () => {
    assert.equal(call('parse_ipv6', s('192.168.255.255')), '0000:0000:0000:0000:0000:ffff:c0a8:ffff')
    assert.equal(call('parse_ipv6', s('192.168.255.255/24')), '0000:0000:0000:0000:0000:ffff:c0a8:ff00')
    assert.equal(call('parse_ipv6', s('255.255.255.255')), '0000:0000:0000:0000:0000:ffff:ffff:ffff')
    assert.equal(call('parse_ipv6', s('fe80::85d:e82c:9446:7994')), 'fe80:0000:0000:0000:085d:e82c:9446:7994')
    assert.equal(call('parse_ipv6', s('not an ip')), '')
    const rows: [string, number, string][] = [
      ['192.168.255.255', 120, '0000:0000:0000:0000:0000:ffff:c0a8:ff00'],
      ['192.168.255.255/24', 124, '0000:0000:0000:0000:0000:ffff:c0a8:ff00'],
      ['255.255.255.255', 128, '0000:0000:0000:0000:0000:ffff:ffff:ffff'],
      ['fe80::85d:e82c:9446:7994', 128, 'fe80:0000:0000:0000:085d:e82c:9446:7994'],
      ['fe80::85d:e82c:9446:7994/120', 124, 'fe80:0000:0000:0000:085d:e82c:9446:7900'],
      ['::192.168.255.255', 128, '0000:0000:0000:0000:0000:ffff:c0a8:ffff'],
      ['::192.168.255.255/24', 128, '0000:0000:0000:0000:0000:ffff:c0a8:ff00'],
    ]
    for (const [ip, mask, want] of rows) assert.equal(call('parse_ipv6_mask', s(ip), l(mask)), want)
  })
  it('ipv6_compare / ipv6_is_match follow the documented examples', () => {
    const equal: [string, string][] = [
      ['192.168.1.1', '192.168.1.1'],
      ['192.168.1.1/24', '192.168.1.255'],
      ['192.168.1.1', '192.168.1.255/24'],
      ['192.168.1.1/30', '192.168.1.255/24'],
      ['fe80::85d:e82c:9446:7994', 'fe80::85d:e82c:9446:7994'],
      ['fe80::85d:e82c:9446:7994/120', 'fe80::85d:e82c:9446:7998'],
      ['fe80::85d:e82c:9446:7994', 'fe80::85d:e82c:9446:7998/120'],
      ['fe80::85d:e82c:9446:7994/120', 'fe80::85d:e82c:9446:7998/120'],
      ['192.168.1.1', '::ffff:c0a8:0101'],
      ['192.168.1.1/24', '::ffff:c0a8:01ff'],
      ['::ffff:c0a8:0101', '192.168.1.255/24'],
      ['::192.168.1.1/30', '192.168.1.255/24'],
    ]
    for (const [a, b] of equal) {
      assert.equal(call('ipv6_compare', s(a), s(b)), 0, `${a} vs ${b}`)
      assert.equal(call('ipv6_is_match', s(a), s(b)), true)
    }
    const withPrefix: [string, string, number][] = [
      ['192.168.1.1', '192.168.1.0', 31],
      ['192.168.1.1/24', '192.168.1.255', 31],
      ['192.168.1.1', '192.168.1.255', 24],
      ['fe80::85d:e82c:9446:7994', 'fe80::85d:e82c:9446:7995', 127],
      ['fe80::85d:e82c:9446:7994/127', 'fe80::85d:e82c:9446:7998', 120],
      ['fe80::85d:e82c:9446:7994/120', 'fe80::85d:e82c:9446:7998', 127],
      ['192.168.1.1/24', '::ffff:c0a8:01ff', 127],
      ['::ffff:c0a8:0101', '192.168.1.255', 120],
      ['::192.168.1.1/30', '192.168.1.255/24', 127],
    ]
    for (const [a, b, p] of withPrefix) {
      assert.equal(call('ipv6_compare', s(a), s(b), l(p)), 0, `${a} vs ${b} /${p}`)
      assert.equal(call('ipv6_is_match', s(a), s(b), l(p)), true)
    }
    assert.equal(call('ipv6_compare', s('::1'), s('::2')), -1)
    assert.equal(call('ipv6_is_match', s('::1'), s('::2')), false)
    assert.equal(call('ipv6_is_match', s('::1'), s('zz')), null)
  })
  it('ipv6_is_in_range / ipv6_is_in_any_range', () => {
    const addr = s('a5e:f127:8a9d:146d:e102:b5d3:c755:abcd')
    assert.equal(call('ipv6_is_in_range', addr, s('a5e:f127:8a9d:146d:e102:b5d3:c755:0000/112')), true)
    assert.equal(call('ipv6_is_in_range', addr, s('a5e:f127:8a9d:146d:e102:b5d3:c755:abcd')), true)
    assert.equal(call('ipv6_is_in_range', addr, s('0:0:0:0:0:ffff:c0a8:ac/60')), false)
    assert.equal(call('ipv6_is_in_any_range', addr, s('::1/128'), s('a5e:f127::/32')), true)
    assert.equal(call('ipv6_is_in_any_range', addr, d(['::1/128', 'fe80::/10'])), false)
  })
})

describe('has_ipv4, has_ipv4_prefix, has_any_ipv4, has_any_ipv4_prefix', () => {
  const line = s('05:04:54 127.0.0.1 GET /favicon.ico 404')
  it('has_ipv4', () => {
    assert.equal(call('has_ipv4', line, s('127.0.0.1')), true)
    assert.equal(call('has_ipv4', s('05:04:54 127.0.0.256 GET /favicon.ico 404'), s('127.0.0.256')), false)
    assert.equal(call('has_ipv4', s('05:04:54127.0.0.1 GET /favicon.ico 404'), s('127.0.0.1')), false)
    assert.equal(call('has_ipv4', s('These requests came from: 192.168.1.1, 10.1.1.115 and 10.1.1.201'), s('10.1.1.115')), true)
  })
  it('has_ipv4_prefix', () => {
    assert.equal(call('has_ipv4_prefix', line, s('127.0.')), true)
    assert.equal(call('has_ipv4_prefix', line, s('127.0')), false)
    assert.equal(call('has_ipv4_prefix', s('05:04:54 127.0.0.256 GET /favicon.ico 404'), s('127.0.')), false)
    assert.equal(call('has_ipv4_prefix', s('05:04:54127.0.0.1 GET /favicon.ico 404'), s('127.0.')), false)
  })
  it('has_any_ipv4', () => {
    assert.equal(call('has_any_ipv4', line, s('127.0.0.1'), s('127.0.0.2')), true)
    assert.equal(call('has_any_ipv4', line, d(['127.0.0.1', '127.0.0.2'])), true)
    assert.equal(call('has_any_ipv4', s('05:04:54 127.0.0.256 GET /favicon.ico 404'), d(['127.0.0.256', '192.168.1.1'])), false)
    assert.equal(call('has_any_ipv4', s('Source address is 10.1.2.3:1234'), d(['10.1.2.3', '127.0.0.1'])), true)
  })
  it('has_any_ipv4_prefix', () => {
    assert.equal(call('has_any_ipv4_prefix', line, s('127.0.'), s('192.168.')), true)
    assert.equal(call('has_any_ipv4_prefix', line, d(['127.0', '192.168.'])), false)
    assert.equal(call('has_any_ipv4_prefix', s('05:04:54 127.0.0.256 GET /favicon.ico 404'), s('127.0.'), s('192.168.')), false)
    assert.equal(call('has_any_ipv4_prefix', s('05:04:54127.0.0.1 GET /favicon.ico 404'), s('127.0.'), s('192.')), false)
  })
})
