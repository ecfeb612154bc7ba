/**
 * @module
 * Documentation examples of the text families (strings, conversion, encoding, IP, hash,
 * conditional) run as whole queries through the engine, so the functions are checked together
 * with the binder's argument typing and column naming. Cases that need something outside the
 * function library are marked todo with the reason.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { stringifyExact } from '../../shared/exact-json.js'
import { compileQuery, EMPTY_SCHEMA, toWireRows } from '../index.js'

interface QueryCase {
  readonly id: string
  readonly query: string
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
  readonly types?: readonly string[]
}

const c = (id: string, query: string, columns: string[], rows: unknown[][], types?: string[]): QueryCase => ({
  id,
  query,
  columns,
  rows,
  ...(types ? { types } : {}),
})

/** Wire values compared as the conformance runner does: numbers within 1e-9, "" equal to null, deep for dynamic. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))
  if ((a === '' && b === null) || (a === null && b === '')) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]))
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a),
      kb = Object.keys(b)
    return ka.length === kb.length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  }
  return a === b
}

/** Runs a case and returns what differs, or undefined. Rows match in any order. */
async function runCase(k: QueryCase): Promise<string | undefined> {
  const compiled = compileQuery(k.query, EMPTY_SCHEMA, { dialect: 'sqlite' })
  const result = await compiled.execute(undefined, { now: 0n, rowCap: 10_000, seed: 1 })
  const wire = toWireRows(result)
  const columns = wire.columns.map((col) => col.name)
  if (!same(columns, k.columns)) return `columns: expected ${JSON.stringify(k.columns)}, got ${JSON.stringify(columns)}`
  if (
    k.types &&
    !same(
      wire.columns.map((col) => col.type),
      k.types,
    )
  )
    return `types: expected ${JSON.stringify(k.types)}, got ${JSON.stringify(wire.columns.map((col) => col.type))}`
  const rows = wire.results.map((r) => columns.map((name) => r[name]))
  const unmatched = [...rows]
  for (const want of k.rows) {
    const at = unmatched.findIndex((got) => same(got, want))
    if (at < 0) return `row not found: ${stringifyExact(want)}; got ${stringifyExact(rows)}`
    unmatched.splice(at, 1)
  }
  return unmatched.length > 0 ? `unexpected rows: ${stringifyExact(unmatched)}` : undefined
}

/** Cases whose failure is outside the function library, with the reason. */
const TODO: Readonly<Record<string, string>> = {}

const CASES: readonly QueryCase[] = [
  c('strcat-1', 'print str = strcat("hello", " ", "world")', ['str'], [['hello world']]),
  c('strcat-delim-1', "print st = strcat_delim('-', 1, '2', 'A', 1s)", ['st'], [['1-2-A-00:00:01']]),
  c('strcat-array-1', 'print str = strcat_array(dynamic([1, 2, 3]), "->")', ['str'], [['1->2->3']]),
  c(
    'substring-1',
    'print a=substring("123456", 1), b=substring("123456", 2, 2), c=substring("ABCD", 0, 2), d=substring("123456", -2, 2)',
    ['a', 'b', 'c', 'd'],
    [['23456', '34', 'AB', '56']],
  ),
  c('strlen-1', 'print length = strlen("hello")', ['length'], [[5]], ['long']),
  c('strlen-3', "print strlen('Çedilla')", ['print_0'], [[8]]),
  c(
    'trim-1',
    'let string_to_trim = @"--https://bing.com--";\nlet substring = "--";\nprint string_to_trim = string_to_trim, trimmed_string = trim(substring,string_to_trim)',
    ['string_to_trim', 'trimmed_string'],
    [['--https://bing.com--', 'https://bing.com']],
  ),
  c(
    'trim-2',
    'range x from 1 to 5 step 1\n| project str = strcat("-  ","Te st",x,@"// $")\n| extend trimmed_str = trim(@"[^\\w]+",str)',
    ['str', 'trimmed_str'],
    [1, 2, 3, 4, 5].map((i: number) => [`-  Te st${i}// $`, `Te st${i}`]),
  ),
  c(
    'trim-start-2',
    'range x from 1 to 5 step 1\n| project str = strcat("-  ","Te st",x,@"// $")\n| extend trimmed_str = trim_start(@"[^\\w]+",str)',
    ['str', 'trimmed_str'],
    [1, 2, 3, 4, 5].map((i: number) => [`-  Te st${i}// $`, `Te st${i}// $`]),
  ),
  c(
    'split-1',
    'print\n    split("aa_bb", "_"),\n    split("aaa_bbb_ccc", "_", 1),\n    split("", "_"),\n    split("a__b", "_"),\n    split("aabbcc", "bb")',
    ['print_0', 'print_1', 'print_2', 'print_3', 'print_4'],
    [[['aa', 'bb'], ['bbb'], [''], ['a', '', 'b'], ['aa', 'cc']]],
  ),
  c(
    'replace-regex-1',
    "range x from 1 to 5 step 1\n| extend str=strcat('Number is ', tostring(x))\n| extend replaced=replace_regex(str, @'is (\\d+)', @'was: \\1')",
    ['x', 'str', 'replaced'],
    [1, 2, 3, 4, 5].map((i: number) => [i, `Number is ${i}`, `Number was: ${i}`]),
  ),
  c(
    'indexof-1',
    'print\n idx1 = indexof("abcdefg","cde")\n , idx2 = indexof("abcdefg","cde",1,4)\n , idx3 = indexof("abcdefg","cde",1,2)\n , idx4 = indexof("abcdefg","cde",3,4)\n , idx5 = indexof("abcdefg","cde",-5)\n , idx6 = indexof(1234567,5,1,4)\n , idx7 = indexof("abcdefg","cde",2,-1)\n , idx8 = indexof("abcdefgabcdefg", "cde", 1, 10, 2)\n , idx9 = indexof("abcdefgabcdefg", "cde", 1, -1, 3)',
    ['idx1', 'idx2', 'idx3', 'idx4', 'idx5', 'idx6', 'idx7', 'idx8', 'idx9'],
    [[2, 2, -1, -1, 2, 4, 2, 9, -1]],
  ),
  c(
    'indexof-regex-1',
    'print\n    idx1 = indexof_regex("abcabc", @"a.c"),\n    idx2 = indexof_regex("abcabcdefg", @"a.c", 0, 9, 2),\n    idx3 = indexof_regex("abcabc", @"a.c", 1, -1, 2),\n    idx4 = indexof_regex("ababaa", @"a.a", 0, -1, 2),\n    idx5 = indexof_regex("abcabc", @"a|ab", -1)',
    ['idx1', 'idx2', 'idx3', 'idx4', 'idx5'],
    [[0, 3, -1, -1, null]],
  ),
  c(
    'extract-1',
    'let Dates = datatable(DateString: string)\n[\n    "15-12-2024",\n    "21-07-2023",\n    "10-03-2022"\n];\nDates\n| extend Month = extract(@"-(\\d{2})-", 1, DateString, typeof(int))\n| project DateString, Month',
    ['DateString', 'Month'],
    [
      ['15-12-2024', 12],
      ['21-07-2023', 7],
      ['10-03-2022', 3],
    ],
    ['string', 'int'],
  ),
  c(
    'extract-2',
    'let Text = "User: JohnDoe, Email: johndoe@example.com, Age: 29";\nprint UserName = extract("User: ([^,]+)", 1, Text)',
    ['UserName'],
    [['JohnDoe']],
  ),
  c(
    'extract-all-1',
    'print Id="82b8be2d-dfa7-4bd1-8f63-24ad26d31449"\n| extend guid_bytes = extract_all(@"([\\da-f]{2})", Id)',
    ['Id', 'guid_bytes'],
    [
      [
        '82b8be2d-dfa7-4bd1-8f63-24ad26d31449',
        ['82', 'b8', 'be', '2d', 'df', 'a7', '4b', 'd1', '8f', '63', '24', 'ad', '26', 'd3', '14', '49'],
      ],
    ],
  ),
  c(
    'extract-all-4',
    'print Id="82b8be2d-dfa7-4bd1-8f63-24ad26d31449"\n| extend guid_bytes = extract_all(@"(?P<first>\\w)(?P<middle>\\w+)(?P<last>\\w)", dynamic([\'first\',2,\'last\']), Id)',
    ['Id', 'guid_bytes'],
    [
      [
        '82b8be2d-dfa7-4bd1-8f63-24ad26d31449',
        [
          ['8', '2b8be2', 'd'],
          ['d', 'fa', '7'],
          ['4', 'bd', '1'],
          ['8', 'f6', '3'],
          ['2', '4ad26d3144', '9'],
        ],
      ],
    ],
  ),
  c(
    'extract-json-1',
    'let json = \'{"name": "John", "age": 30, "city": "New York"}\';\nprint extract_json("$.name", json, typeof(string));',
    ['print_0'],
    [['John']],
  ),
  c(
    'countof-1',
    'print a=countof("aaa", "a"), b=countof("aaaa", "aa"), c=countof("ababa", "ab", "normal"), d=countof("ababa", "aba"), e=countof("ababa", "aba", "regex"), f=countof("abcabc", "a.c", "regex")',
    ['a', 'b', 'c', 'd', 'e', 'f'],
    [[3, 3, 2, 2, 1, 2]],
  ),
  c(
    'strrep-1',
    "print from_str = strrep('ABC', 2), from_int = strrep(123,3,'.'), from_time = strrep(3s,2,' ')",
    ['from_str', 'from_int', 'from_time'],
    [['ABCABC', '123.123.123', '00:00:03 00:00:03']],
  ),
  c(
    'strcmp-1',
    'datatable(string1:string, string2:string) [\n    "ABC","ABC",\n    "abc","ABC",\n    "ABC","abc",\n    "abcde","abc"\n]\n| extend result = strcmp(string1,string2)',
    ['string1', 'string2', 'result'],
    [
      ['ABC', 'ABC', 0],
      ['abc', 'ABC', 1],
      ['ABC', 'abc', -1],
      ['abcde', 'abc', 1],
    ],
  ),
  c(
    'has-any-index-1',
    "print\n idx1 = has_any_index(\"this is an example\", dynamic(['this', 'example']))\n , idx2 = has_any_index(\"this is an example\", dynamic(['not', 'example']))\n , idx3 = has_any_index(\"this is an example\", dynamic(['not', 'found']))\n , idx4 = has_any_index(\"Example number 2\", range(1, 3, 1))\n , idx5 = has_any_index(\"this is an example\", dynamic([]))",
    ['idx1', 'idx2', 'idx3', 'idx4', 'idx5'],
    [[0, 1, -1, 1, -1]],
  ),
  c(
    'reverse-2',
    "print ['int'] = 12345, ['double'] = 123.45, \n['datetime'] = datetime(2017-10-15 12:00), ['timespan'] = 3h\n| project rint = reverse(['int']), rdouble = reverse(['double']), \nrdatetime = reverse(['datetime']), rtimespan = reverse(['timespan'])",
    ['rint', 'rdouble', 'rdatetime', 'rtimespan'],
    [['54321', '54.321', 'Z0000000.00:00:21T51-01-7102', '00:00:30']],
  ),
  c(
    'parse-csv-1',
    'print result=parse_csv(\'aa,"b,b,b",cc,"Escaping quotes: ""Title""","line1\\nline2"\')',
    ['result'],
    [[['aa', 'b,b,b', 'cc', 'Escaping quotes: "Title"', 'line1\nline2']]],
  ),
  c('parse-command-line-1', 'print parse_command_line("echo \\"hello world!\\"", "windows")', ['print_0'], [[['echo', 'hello world!']]]),
  c(
    'parse-version-1',
    'let dt = datatable(v: string)\n    [\n    "0.0.0.5", "0.0.7.0", "0.0.3", "0.2", "0.1.2.0", "1.2.3.4", "1"\n];\ndt\n| extend parsedVersion = parse_version(v)',
    ['v', 'parsedVersion'],
    [
      ['0.0.0.5', 5],
      ['0.0.7.0', 700000000],
      ['0.0.3', 300000000],
      ['0.2', 20000000000000000],
      ['0.1.2.0', 10000000200000000],
      ['1.2.3.4', 1.0000000200000003e24],
      ['1', 1e24],
    ],
  ),
  c(
    'parse-version-2',
    'let dt = datatable(lab: string, v: string)\n[\n    "Lab A", "0.0.0.5",\n    "Lab B", "0.0.7.0",\n    "Lab D","0.0.3",\n    "Lab C", "0.2", \n    "Lab G", "0.1.2.0",\n    "Lab F", "1.2.3.4",\n    "Lab E", "1",\n];\ndt\n| extend parsed_version = parse_version(v)\n| extend needs_update = iff(parsed_version < parse_version("1.0.0.0"), "Yes", "No")\n| project lab, v, needs_update\n| sort by lab asc , v, needs_update',
    ['lab', 'v', 'needs_update'],
    [
      ['Lab A', '0.0.0.5', 'Yes'],
      ['Lab B', '0.0.7.0', 'Yes'],
      ['Lab C', '0.2', 'Yes'],
      ['Lab D', '0.0.3', 'Yes'],
      ['Lab E', '1', 'No'],
      ['Lab F', '1.2.3.4', 'No'],
      ['Lab G', '0.1.2.0', 'Yes'],
    ],
  ),
  c('unicode-from-1', 'print arr = unicode_codepoints_from_string("⒦⒰⒮⒯⒪")', ['arr'], [[[9382, 9392, 9390, 9391, 9386]]]),
  c('unicode-to-3', 'print str = unicode_codepoints_to_string(dynamic([75, 117, 115]), 116, 111)', ['str'], [['Kusto']]),
  c(
    'unicode-to-5',
    'print str = unicode_codepoints_to_string(range(48,57), range(65,90), range(97,122))',
    ['str'],
    [['0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz']],
  ),
  c(
    'punycode-2',
    "print domain='艺术.com'\n| extend domain_vec = split(domain, '.')\n| extend encoded_host = punycode_from_string(tostring(domain_vec[0]))\n| extend encoded_domain = strcat('xn--', encoded_host, '.', domain_vec[1])",
    ['domain', 'domain_vec', 'encoded_host', 'encoded_domain'],
    [['艺术.com', ['艺术', 'com'], 'cqv902d', 'xn--cqv902d.com']],
  ),
  c(
    'format-bytes-1',
    'print \nv1 = format_bytes(564),\nv2 = format_bytes(10332, 1),\nv3 = format_bytes(20010332),\nv4 = format_bytes(20010332, 2),\nv5 = format_bytes(20010332, 0, "KB")',
    ['v1', 'v2', 'v3', 'v4', 'v5'],
    [['564 Bytes', '10.1 KB', '19 MB', '19.08 MB', '19541 KB']],
  ),
  c(
    'translate-1',
    'print a=translate("abc", "x", "abc"), b=translate("abc", "", "ab"), c=translate("krasp", "otsku", "spark")',
    ['a', 'b', 'c'],
    [['xxx', '', 'kusto']],
  ),
  c(
    'tohex-1',
    "print\n    tohex(256) == '100',\n    tohex(-256) == 'ffffffffffffff00',\n    tohex(toint(-256), 8) == 'ffffff00',\n    tohex(256, 8) == '00000100',\n    tohex(256, 2) == '100'",
    ['print_0', 'print_1', 'print_2', 'print_3', 'print_4'],
    [[true, true, true, true, true]],
  ),
  c(
    'toguid-1',
    'datatable(str: string)\n[\n    "0123456789abcdef0123456789abcdef",\n    "0123456789ab-cdef-0123-456789abcdef",\n    "a string that is not a guid"\n]\n| extend guid = toguid(str)',
    ['str', 'guid'],
    [
      ['0123456789abcdef0123456789abcdef', '01234567-89ab-cdef-0123-456789abcdef'],
      ['0123456789ab-cdef-0123-456789abcdef', '01234567-89ab-cdef-0123-456789abcdef'],
      ['a string that is not a guid', null],
    ],
  ),
  c('toint-2', 'print toint(2.3)\n|project Integer = print_0', ['Integer'], [[2]]),
  c('todecimal-1', 'print todecimal("123.45678") == decimal(123.45678)', ['print_0'], [[true]]),
  c(
    'gettype-1',
    "print a=gettype(\"a\"), b=gettype(111), c=gettype(1==1), d=gettype(now()), e=gettype(1s), f=gettype(parse_json('1')), g=gettype(parse_json(' \"abc\" ')), h=gettype(parse_json(' {\"abc\":1} ')), i=gettype(parse_json(' [1, 2, 3] ')), j=gettype(123.45), k=gettype(guid(12e8b78d-55b4-46ae-b068-26d7a0080254)), l=gettype(parse_json(''))",
    ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'],
    [['string', 'long', 'bool', 'datetime', 'timespan', 'int', 'string', 'dictionary', 'array', 'real', 'guid', 'null']],
  ),
  c(
    'parse-json-2',
    'let d=\'{"a":123, "b":"{\\\\"c\\\\":456}"}\';\nprint d_b_c=parse_json(tostring(parse_json(d).b)).c',
    ['d_b_c'],
    [[456]],
  ),
  c('coalesce-1', 'print result=coalesce(tolong("not a number"), tolong("42"), 33)', ['result'], [[42]]),
  c(
    'case-1',
    'range Size from 1 to 15 step 2\n| extend bucket = case(Size <= 3, "Small", \n                       Size <= 10, "Medium", \n                       "Large")',
    ['Size', 'bucket'],
    [
      [1, 'Small'],
      [3, 'Small'],
      [5, 'Medium'],
      [7, 'Medium'],
      [9, 'Medium'],
      [11, 'Large'],
      [13, 'Large'],
      [15, 'Large'],
    ],
  ),
  c(
    'b64-guid-1',
    'print Quine = base64_encode_fromguid(toguid("ae3133f2-6e22-49ae-b06a-16e6a9b212eb"))',
    ['Quine'],
    [['8jMxriJurkmwahbmqbIS6w==']],
  ),
  c('b64-guid-2', 'print Quine = base64_decode_toguid("JpbpECu8dUy7Pv5gbeJXAA==")', ['Quine'], [['10e99626-bc2b-754c-bb3e-fe606de25700']]),
  c(
    'b64-arr-1',
    'let bytes_array = toscalar(print base64_decode_toarray("S3VzdG8="));\nprint decoded_base64_string = base64_encode_fromarray(bytes_array)',
    ['decoded_base64_string'],
    [['S3VzdG8=']],
  ),
  c(
    'url-encode-1',
    "let url = @'https://www.bing.com/hello world';\nprint original = url, encoded = url_encode(url)",
    ['original', 'encoded'],
    [['https://www.bing.com/hello world', 'https%3a%2f%2fwww.bing.com%2fhello+world']],
  ),
  c(
    'parse-urlquery-2',
    "let getQueryParamValue = (querystring: string, param: string) {\n    let params = parse_urlquery(querystring);\n    tostring(params[\"Query Parameters\"].[param])\n};\nprint UrlQuery = 'view=vs-2019&preserve-view=true'\n| extend view = getQueryParamValue(UrlQuery, 'view')\n| extend preserve = getQueryParamValue(UrlQuery, 'preserve-view')",
    ['UrlQuery', 'view', 'preserve'],
    [['view=vs-2019&preserve-view=true', 'vs-2019', 'true']],
  ),
  c(
    'parse-path-1',
    'datatable(p:string) \n[\n    @"C:\\temp\\file.txt",\n    "/usr/lib/temp/file.txt"\n]\n| extend path_parts = parse_path(p)',
    ['p', 'path_parts'],
    [
      [
        'C:\\temp\\file.txt',
        {
          Scheme: '',
          RootPath: 'C:',
          DirectoryPath: 'C:\\temp',
          DirectoryName: 'temp',
          Filename: 'file.txt',
          Extension: 'txt',
          AlternateDataStreamName: '',
        },
      ],
      [
        '/usr/lib/temp/file.txt',
        {
          Scheme: '',
          RootPath: '',
          DirectoryPath: '/usr/lib/temp',
          DirectoryName: 'temp',
          Filename: 'file.txt',
          Extension: 'txt',
          AlternateDataStreamName: '',
        },
      ],
    ],
  ),
  c('hash-1', 'print result=hash("World")', ['result'], [[1846988464401551951n]]),
  c('hash-2', 'print result=hash("World", 100)', ['result'], [[51]]),
  c(
    'sha256-1',
    'print \n    h1=hash_sha256("World"),\n    h2=hash_sha256(datetime(2020-01-01))',
    ['h1', 'h2'],
    [
      [
        '78ae647dc5544d227130a0682a51e30bc7777fbb6d8a8f17007463a3ecd1d524',
        'ba666752dc1a20eb750b0eb64e780cc4c968bc9fb8813461c1d7e750f302d71d',
      ],
    ],
  ),
  c(
    'parse-ipv4-1',
    "datatable(ip_string: string)\n[\n    '192.168.1.1', '192.168.1.1/24', '255.255.255.255/31'\n]\n| extend ip_long = parse_ipv4(ip_string)",
    ['ip_string', 'ip_long'],
    [
      ['192.168.1.1', 3232235777],
      ['192.168.1.1/24', 3232235776],
      ['255.255.255.255/31', 4294967294],
    ],
  ),
  c(
    'format-ipv4-1',
    "datatable(address:string, mask:long)\n[\n '192.168.1.1', 24,          \n '192.168.1.1', 32,          \n '192.168.1.1/24', 32,       \n '192.168.1.1/24', long(-1), \n]\n| extend result = format_ipv4(address, mask), \n         result_mask = format_ipv4_mask(address, mask)",
    ['address', 'mask', 'result', 'result_mask'],
    [
      ['192.168.1.1', 24, '192.168.1.0', '192.168.1.0/24'],
      ['192.168.1.1', 32, '192.168.1.1', '192.168.1.1/32'],
      ['192.168.1.1/24', 32, '192.168.1.0', '192.168.1.0/24'],
      ['192.168.1.1/24', -1, '', ''],
    ],
  ),
  c(
    'ipv4-any-3',
    'let LocalNetworks=dynamic([\n    "192.168.1.1/16",\n    "127.0.0.1/8",\n    "10.0.0.1/8"\n]);\nlet IPs=datatable(IP:string) [\n    "10.1.2.3",\n    "192.168.1.5",\n    "123.1.11.21",\n    "1.1.1.1"\n];\nIPs\n| extend IsLocal=ipv4_is_in_any_range(IP, LocalNetworks)',
    ['IP', 'IsLocal'],
    [
      ['10.1.2.3', true],
      ['192.168.1.5', true],
      ['123.1.11.21', false],
      ['1.1.1.1', false],
    ],
  ),
  c(
    'cidr-1',
    'print start_IP="1.1.128.0", end_IP="1.1.140.255"\n | project ipv4_range_list = ipv4_range_to_cidr_list(start_IP, end_IP)',
    ['ipv4_range_list'],
    [[['1.1.128.0/21', '1.1.136.0/22', '1.1.140.0/24']]],
  ),
  c(
    'netmask-1',
    "datatable(ip_string:string)\n[\n '10.1.2.3',\n '192.168.1.1/24',\n '127.0.0.1/16',\n]\n| extend cidr_suffix = ipv4_netmask_suffix(ip_string)",
    ['ip_string', 'cidr_suffix'],
    [
      ['10.1.2.3', 32],
      ['192.168.1.1/24', 24],
      ['127.0.0.1/16', 16],
    ],
  ),
  c(
    'zlib-1',
    'print zcomp = zlib_compress_to_base64_string("1234567890qwertyuiop")',
    ['zcomp'],
    [['eAEBFADr/zEyMzQ1Njc4OTBxd2VydHl1aW9wOAkGdw==']],
  ),
  c('parse-xml-1', 'print d=parse_xml("<e name=\\"value\\">text</e>")', ['d'], [[{ e: { '@name': 'value', '#text': 'text' } }]]),
  c('tostring-1', 'print tostring(123)', ['print_0'], [['123']]),
  c('iff-null', 'print x=iff(isnull(long(null)), "null", "not")', ['x'], [['null']]),
  c(
    'isempty-1',
    'print a=isempty(""), b=isempty("x"), c=isempty(parsejson("")), d=isempty(parsejson("[]")), e=isempty(parsejson("{}"))',
    ['a', 'b', 'c', 'd', 'e'],
    [[true, false, true, false, false]],
  ),
  c(
    'url-decode-1',
    "let url = @'https%3a%2f%2fwww.bing.com%2f';\nprint original = url, decoded = url_decode(url)",
    ['original', 'decoded'],
    [['https%3a%2f%2fwww.bing.com%2f', 'https://www.bing.com/']],
  ),
  c('tolower-1', 'print tolower("Hello"), toupper("hello")', ['print_0', 'print_1'], [['hello', 'HELLO']]),
  c(
    'parse-url-1',
    'print Result=parse_url("scheme://username:password@host:1234/this/is/a/path?k1=v1&k2=v2#fragment")',
    ['Result'],
    [
      [
        {
          Scheme: 'scheme',
          Host: 'host',
          Port: '1234',
          Path: 'this/is/a/path',
          Username: 'username',
          Password: 'password',
          'Query Parameters': { k1: 'v1', k2: 'v2' },
          Fragment: 'fragment',
        },
      ],
    ],
  ),
  c('project-tostring-name', 'datatable(Name:long)[1] | project tostring(Name)', ['Name'], [['1']]),
]

describe('text function documentation examples as queries', () => {
  for (const k of CASES) {
    const todo = TODO[k.id]
    it(k.id, todo ? { todo } : {}, async () => {
      const diff = await runCase(k)
      assert.equal(diff, undefined)
    })
  }
})
