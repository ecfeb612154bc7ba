import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { kqlTable, ROWID } from '../../../test/support/kql-schema.js'
import { compileQuery } from '../compile-query.js'
import { KqlError } from '../kql-error.js'
import type { PlanNode } from '../plan/plan.js'
import type { KqlSchema } from '../schema.js'

const schema: KqlSchema = {
  tables: [
    kqlTable(
      'Readings',
      'conn_readings',
      { timestamp: 'datetime', Device: 'string', Temperature: 'real', Count: 'long' },
      { hiddenColumns: ROWID, sqlColumns: { Temperature: 'temp_c' } },
    ),
    kqlTable('Devices', 'conn_devices', { Device: 'string', Site: 'string' }),
  ],
}

const compile = (q: string) => compileQuery(q, schema, { dialect: 'sqlite' })
const columns = (q: string): string[] => compile(q).columns.map((c) => `${c.name}:${c.type}`)

function semanticError(q: string): KqlError {
  try {
    compile(q)
  } catch (e) {
    assert.ok(e instanceof KqlError, `expected a KqlError, got ${String(e)}`)
    assert.ok(e.position, 'the error carries a position')
    return e
  }
  assert.fail(`expected an error for: ${q}`)
}

function shape(p: PlanNode): string {
  const inputs: PlanNode[] = []
  if ('input' in p) inputs.push(p.input)
  if (p.kind === 'Join') inputs.push(p.left, p.right)
  if (p.kind === 'Union') inputs.push(...p.inputs)
  return inputs.length === 0 ? p.kind : `${p.kind}(${inputs.map(shape).join(', ')})`
}

describe('binder: names and suggestions', () => {
  it('reports unknown tables, columns and functions with the closest name', () => {
    const t = semanticError('Reading | take 1')
    assert.equal(t.kind, 'semantic')
    assert.match(t.message, /^line 1, column 1: unknown table 'Reading' \(did you mean 'Readings'\?\)/)
    const c = semanticError('Readings\n| where temperature > 20')
    assert.deepEqual([c.position?.line, c.position?.column], [2, 9])
    assert.match(c.message, /unknown column or variable 'temperature' \(did you mean 'Temperature'\?\)/)
    const f = semanticError('Readings | extend x = strln(Device)')
    assert.match(f.message, /unknown function 'strln' \(did you mean 'strlen'\?\)/)
    const j = semanticError('Readings | join (Devices) on Sit')
    assert.match(j.message, /the left side of the join has no column 'Sit'/)
  })

  it('lists the workspace tables a query reads, once each, including through lets and functions', () => {
    assert.deepEqual(compile('Readings | join (Devices) on Device | join (Readings) on Device').tables, ['Readings', 'Devices'])
    assert.deepEqual(compile('let D = Devices; let f = () { D }; f() | count').tables, ['Devices'])
    assert.deepEqual(compile('let unused = Devices; print 1').tables, [])
  })

  it('keeps hidden columns out of * but lets queries name them', () => {
    assert.deepEqual(columns('Readings | take 1'), ['timestamp:datetime', 'Device:string', 'Temperature:real', 'Count:long'])
    assert.deepEqual(columns('Readings | project _rowid, Device'), ['_rowid:long', 'Device:string'])
    assert.deepEqual(columns('Readings | where _rowid > 3 | extend r = _rowid * 2 | project-away timestamp'), [
      'Device:string',
      'Temperature:real',
      'Count:long',
      'r:long',
    ])
    assert.deepEqual(compile('Readings | getschema').columns.length, 4)
  })

  it('a pattern invocation without a definition is a semantic error naming it (issue 17 item 10)', () => {
    for (const q of [
      'declare pattern map_ip_to_longlat; map_ip_to_longlat("10.10.10.10")',
      'declare pattern app = (a:string)[e:string] { ("X").["Stop"] = { print x=1 }; }; union app("X").["*"] | count',
    ]) {
      assert.throws(
        () => compile(q),
        (err: unknown) => err instanceof KqlError && err.kind === 'semantic' && /has no definition/.test(err.message),
      )
    }
  })

  it('keeps hidden columns out of project-rename, project-keep and project-reorder (issue 17 item 7)', () => {
    const all = ['timestamp:datetime', 'Device:string', 'Temperature:real', 'Count:long']
    assert.deepEqual(columns('Readings | project-keep *'), all)
    assert.deepEqual(columns('Readings | project-keep *e*'), ['timestamp:datetime', 'Device:string', 'Temperature:real'])
    assert.deepEqual(columns('Readings | project-rename d = Device'), ['timestamp:datetime', 'd:string', 'Temperature:real', 'Count:long'])
    assert.deepEqual(columns('Readings | project-reorder Count'), ['Count:long', 'timestamp:datetime', 'Device:string', 'Temperature:real'])
    assert.deepEqual(columns('Readings | project-by-names "*"'), all)
    // named explicitly, as with project
    assert.deepEqual(columns('Readings | project-keep _rowid'), ['_rowid:long'])
    assert.deepEqual(columns('Readings | project-rename id = _rowid | project-keep id'), ['id:long'])
  })

  it('reads physical column names from the schema in the table scan', () => {
    const q = compile('Readings | where Temperature > 20 | project Device')
    assert.equal(shape(q.plan), 'Project(Filter(TableScan))')
    const scan = (q.plan as { input: { input: PlanNode } }).input.input
    assert.ok(scan.kind === 'TableScan')
    assert.deepEqual(scan.sqlColumns, ['timestamp', 'Device', 'temp_c', 'Count', '_rowid'])
    assert.equal(scan.sqlName, 'conn_readings')
  })
})

describe('binder: types', () => {
  it('types arithmetic as Kusto does', () => {
    assert.deepEqual(
      columns(
        'print a = 1 + 1, b = 1 + 1.5, c = toint(1) * toint(2), d = now() - ago(1h), e = now() + 1d, f = 1h / 1m, g = 1h * 2, h = dynamic(1) + 1, i = -1h',
      ),
      ['a:long', 'b:real', 'c:int', 'd:timespan', 'e:datetime', 'f:real', 'g:timespan', 'h:long', 'i:timespan'],
    )
  })

  it('types comparisons, string operators, in and between as bool', () => {
    assert.deepEqual(
      columns('Readings | project a = Temperature > 1, b = Device has "x", c = Count in (1, 2), d = timestamp between (ago(1d) .. now())'),
      ['a:bool', 'b:bool', 'c:bool', 'd:bool'],
    )
  })

  it('refuses operators on incompatible types, naming them', () => {
    assert.match(semanticError('print "a" + 1').message, /line 1, column 11: the operator '\+' cannot be applied to string and long/)
    assert.match(semanticError('Readings | where Device == 5').message, /cannot compare string with long/)
    assert.match(semanticError('Readings | where Count').message, /where needs a bool predicate, but 'Count' is long/)
    assert.match(semanticError('print 1h and true').message, /'and' needs bool operands, got timespan and bool/)
    assert.match(semanticError('Readings | join (datatable(Device:long)[1]) on Device').message, /join keys must have the same type/)
  })

  it('repositions errors the function library raises without a position', () => {
    const e = semanticError('print x = 1,\n  y = strlen("a", "b")')
    assert.equal(e.position?.line, 2)
    assert.match(e.message, /^line 2, column 7: strlen\(\)/)
  })
})

describe('binder: column naming', () => {
  it('names unnamed expressions Column1, Column2 ... and print columns print_N', () => {
    assert.deepEqual(columns('Readings | project Count + 1, Count * 2'), ['Column1:long', 'Column2:long'])
    assert.deepEqual(columns('print 1, "a"'), ['print_0:long', 'print_1:string'])
  })

  it('names summarize outputs count_, sum_x, by-bin keys after their column, and suffixes clashes', () => {
    assert.deepEqual(columns('Readings | summarize count(), sum(Count), avg(Temperature) by bin(timestamp, 1h), Device'), [
      'timestamp:datetime',
      'Device:string',
      'count_:long',
      'sum_Count:long',
      'avg_Temperature:real',
    ])
    assert.deepEqual(columns('Readings | summarize count(), count()'), ['count_:long', 'count_1:long'])
    assert.deepEqual(columns('Readings | summarize n = count(), twice = 2 * count() by Device'), ['Device:string', 'n:long', 'twice:long'])
  })

  it('suffixes duplicate right-side join columns with a number', () => {
    assert.deepEqual(columns('Readings | project Device, Count | join (Readings | project Device, Count) on Device'), [
      'Device:string',
      'Count:long',
      'Device1:string',
      'Count1:long',
    ])
    assert.deepEqual(columns('Readings | project Device, Count | lookup (Devices) on Device'), [
      'Device:string',
      'Count:long',
      'Site:string',
    ])
  })

  it('gives conflicting union columns a type suffix', () => {
    assert.deepEqual(columns('union (datatable(x:long)[1]), (datatable(x:string)["a"])'), ['x_long:long', 'x_string:string'])
  })
})

describe('binder: statements and functions', () => {
  it('refuses recursion, missing arguments and unknown named arguments', () => {
    const r = semanticError('let f = (x:long) { f(x) };\nprint f(1)')
    assert.equal(r.kind, 'unsupported')
    assert.match(r.message, /recursive call of 'f'/)
    assert.match(semanticError('let f = (a:long, b:long) { a + b }; print f(1)').message, /f\(\): missing argument 'b'/)
    assert.match(semanticError('let f = (a:long) { a }; print f(c = 1)').message, /f\(\) has no parameter 'c'/)
    assert.match(semanticError('let f = (T:(Missing:long)) { T }; f(Readings)').message, /has no column 'Missing'/)
  })

  it('tells tables and scalars apart', () => {
    assert.match(
      semanticError('let n = 5; n | take 1').message,
      /'n' is a scalar value; a table is expected here|the query must end with a tabular expression/,
    )
    assert.match(semanticError('Readings | extend x = Devices').message, /'Devices' is a table; a scalar is expected here/)
    assert.match(semanticError('let x = 1;').message, /the query has no tabular expression to return/)
  })

  it('refuses aggregates outside summarize and non-aggregates inside it', () => {
    assert.match(semanticError('Readings | extend c = count()').message, /count\(\) is an aggregation: use it in summarize/)
    assert.match(semanticError('Readings | summarize Device').message, /'Device' must be used inside an aggregation/)
    assert.match(semanticError('Readings | summarize strlen("a")').message, /summarize expects aggregations/)
    assert.match(semanticError('Readings | summarize Count + sum(Count)').message, /'Count' must be used inside an aggregation/)
  })

  it('needs constant row counts and known plugins', () => {
    assert.match(semanticError('Readings | take Count').message, /take expects a constant number of rows/)
    const p = semanticError('Readings | evaluate python(typeof(*), "x")')
    assert.equal(p.kind, 'unsupported')
    assert.match(p.message, /the evaluate plugin 'python' is not supported/)
  })

  it('reports a declared query parameter without a value where it is used', () => {
    assert.match(
      semanticError('declare query_parameters(n:long);\nRange | take n').message,
      /unknown table 'Range'|query parameter 'n' has no value/,
    )
    assert.match(semanticError('declare query_parameters(n:long);\nprint n').message, /line 2, column 7: query parameter 'n' has no value/)
  })

  it('returns render as a visualization hint', () => {
    const q = compile(
      'Readings | summarize avg(Temperature) by bin(timestamp, 1h) | render timechart with (title="Temp", ycolumns=avg_Temperature)',
    )
    assert.deepEqual(q.visualization, { kind: 'timechart', properties: { title: 'Temp', ycolumns: 'avg_Temperature' } })
  })
})
