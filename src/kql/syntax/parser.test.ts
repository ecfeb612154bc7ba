import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type * as A from './ast.js'
import { parseExpression, parseQuery } from './parser.js'

/** A compact s-expression of an expression, for precedence assertions. */
function sx(e: A.Expr): string {
  switch (e.kind) {
    case 'Name':
      return e.name
    case 'Literal':
      return typeof e.value === 'string' ? JSON.stringify(e.value) : typeof e.value === 'bigint' ? `${e.value}t` : String(e.value)
    case 'Binary':
      return `(${e.op} ${sx(e.left)} ${sx(e.right)})`
    case 'Unary':
      return `(${e.op} ${sx(e.operand)})`
    case 'Paren':
      return sx(e.expr)
    case 'Call':
      return `${e.name}(${e.args.map(sx).join(', ')})`
    case 'Member':
      return `${sx(e.target)}.${e.name}`
    case 'Index':
      return `${sx(e.target)}[${sx(e.index)}]`
    case 'In':
      return `(${e.op} ${sx(e.left)} [${e.items.map(sx).join(', ')}])`
    case 'Between':
      return `(${e.negated ? '!' : ''}between ${sx(e.left)} ${sx(e.low)} ${sx(e.high)})`
    case 'Star':
      return '*'
    case 'NamedArg':
      return `${e.name}=${sx(e.value)}`
    case 'Pipe':
      return `${sx(e.source)} | ${e.op.kind}`
    default:
      return e.kind
  }
}

function syntaxError(text: string): KqlError {
  try {
    parseQuery(text)
  } catch (e) {
    assert.ok(e instanceof KqlError, `expected KqlError, got ${String(e)}`)
    return e
  }
  assert.fail(`expected an error for: ${text}`)
}

/** The operators of a single-statement pipeline, in order. */
function ops(text: string): A.Operator[] {
  const st = parseQuery(text).statements[0]
  assert.ok(st?.kind === 'Query')
  const out: A.Operator[] = []
  let e: A.Expr = st.expr
  while (e.kind === 'Pipe') {
    out.unshift(e.op)
    e = e.source
  }
  return out
}

describe('parser: expressions', () => {
  it('applies KQL precedence: * over +, + over comparison, comparison over and, and over or', () => {
    assert.equal(sx(parseExpression('1 + 2 * 3')), '(+ 1 (* 2 3))')
    assert.equal(sx(parseExpression('a + 1 > b * 2 and c or d')), '(or (and (> (+ a 1) (* b 2)) c) d)')
    assert.equal(sx(parseExpression('-x * 2')), '(* (- x) 2)')
    assert.equal(sx(parseExpression('a - b - c')), '(- (- a b) c)')
    assert.equal(sx(parseExpression('(a or b) and c')), '(and (or a b) c)')
  })

  it('reads string operators, their negations and case-sensitive forms', () => {
    assert.equal(sx(parseExpression('s !contains "x" and s has_cs "Y"')), '(and (!contains s "x") (has_cs s "Y"))')
    assert.equal(sx(parseExpression('s matches regex "[0-9]+"')), '(matches regex s "[0-9]+")')
    assert.equal(sx(parseExpression('s !startswith_cs "a"')), '(!startswith_cs s "a")')
    assert.equal(sx(parseExpression('s notcontains "a"')), '(!contains s "a")')
  })

  it('reads in, !in, in~, !in~, has_any, has_all and between', () => {
    assert.equal(sx(parseExpression('x in (1, 2)')), '(in x [1, 2])')
    assert.equal(sx(parseExpression('x !in~ ("a")')), '(!in~ x ["a"])')
    assert.equal(sx(parseExpression('x in~ ("a", "b")')), '(in~ x ["a", "b"])')
    assert.equal(sx(parseExpression('x has_any ("a", "b")')), '(has_any x ["a", "b"])')
    assert.equal(sx(parseExpression('x between (1 .. 10)')), '(between x 1 10)')
    assert.equal(sx(parseExpression('x !between (1 .. 10) or y')), '(or (!between x 1 10) y)')
  })

  it('reads accessors, calls, named arguments and star arguments', () => {
    assert.equal(sx(parseExpression("d.a['b'][0].c[-1]")), 'd.a["b"][0].c[(- 1)]')
    assert.equal(sx(parseExpression('f(c=7, a=12)')), 'f(c=7, a=12)')
    assert.equal(sx(parseExpression('arg_max(ts, *)')), 'arg_max(ts, *)')
    assert.equal(sx(parseExpression("['my col'] + 1")), '(+ my col 1)')
    assert.equal(sx(parseExpression('d.[k].x')), 'd[k].x')
    assert.equal(sx(parseExpression('extract("x", 1, s, typeof(int))')), 'extract("x", 1, s, "int")')
  })

  it('reads typed literals, including nulls and Kusto datetime forms', () => {
    const lit = (t: string): A.LiteralExpr => {
      const e = parseExpression(t)
      assert.equal(e.kind, 'Literal')
      return e as A.LiteralExpr
    }
    assert.deepEqual([lit('int(null)').type, lit('int(null)').value], ['int', null])
    assert.equal(lit('long(-5)').value, -5)
    assert.ok(Number.isNaN(lit('real(nan)').value as number))
    assert.equal(lit('real(+inf)').value, Infinity)
    assert.equal(lit('datetime(2024-01-02 03:04:05)').value, 17041646450000000n)
    assert.equal(lit('datetime("2015-01-01")').value, 14200704000000000n)
    assert.equal(lit('datetime(2025, 6, 14)').value, lit('datetime(2025-06-14)').value)
    assert.equal(lit('timespan(1.02:03:04)').value, 937840000000n)
    assert.equal(lit('time(2)').value, 1728000000000n)
    assert.equal(lit('guid(74BE27DE-1E4E-49D9-B579-FE0B331D3642)').value, '74be27de-1e4e-49d9-b579-fe0b331d3642')
    assert.equal(lit('bool(true)').value, true)
    assert.deepEqual(lit(`dynamic({"a": [1, -2.5, "x", null, true], 'b': {}})`).value, { a: [1, -2.5, 'x', null, true], b: {} })
    assert.deepEqual(lit('dynamic([datetime(2024-01-01), 1h])').value, ['2024-01-01T00:00:00Z', '01:00:00'])
    assert.equal(lit('dynamic(null)').value, null)
    assert.equal(lit(`"Hello" ', ' @"world"`).value, 'Hello, world')
  })
})

describe('parser: statements and operators', () => {
  it('reads let statements of scalars, tables, functions and views', () => {
    const s = parseQuery(
      'let n = 5; let T = range x from 1 to n step 1; let f = (a:long, b:string = "d", T:(x:long)) { T | where x > a }; let v = view () { T }; T',
    )
    assert.deepEqual(
      s.statements.map((x) => x.kind),
      ['Let', 'Let', 'Let', 'Let', 'Query'],
    )
    const f = s.statements[2] as A.LetStatement
    assert.equal(f.value.kind, 'Lambda')
    const lambda = f.value as A.Lambda
    assert.deepEqual(
      lambda.params.map((p) => [p.name, p.type.kind, p.defaultValue !== undefined]),
      [
        ['a', 'scalar', false],
        ['b', 'scalar', true],
        ['T', 'tabular', false],
      ],
    )
    assert.equal(((s.statements[3] as A.LetStatement).value as A.Lambda).isView, true)
  })

  it('accepts set and declare query_parameters statements', () => {
    const s = parseQuery('set querytrace; set truncationmaxrecords = 10; declare query_parameters(n:long = 3); print n')
    assert.deepEqual(
      s.statements.map((x) => x.kind),
      ['Set', 'Set', 'DeclareParameters', 'Query'],
    )
  })

  it('reads dashed operator names and every tabular operator', () => {
    const kinds = ops(`T | where a > 1 | filter b | project a, c = b | project-away x* | project-keep a | project-rename n = a
      | project-reorder b desc | extend d = 1 | summarize count() by a | count | distinct * | top 3 by a asc nulls first
      | take 1 | limit 2 | sort by a | order by b desc | join kind=inner (U) on a | lookup (V) on $left.a == $right.b
      | mv-expand with_itemindex=i x to typeof(long) limit 5 | mv-apply y on (take 1) | parse s with "a" v:long *
      | parse-where kind=regex s with "(x)" w | parse-kv s as (k:string) with (pair_delimiter=',', kv_delimiter=':')
      | make-series avg(v) default=0 on ts from 1 to 10 step 1 by k | serialize r = row_number() | sample 3
      | sample-distinct 2 of a | as Z | getschema | top-nested 2 of a by count() | top-hitters 2 of a
      | scan with (step s: true;) | evaluate narrow() | invoke f() | union U | consume | render timechart`).map((o) => o.kind)
    assert.deepEqual(kinds, [
      'Where',
      'Where',
      'Project',
      'ProjectAway',
      'ProjectKeep',
      'ProjectRename',
      'ProjectReorder',
      'Extend',
      'Summarize',
      'Count',
      'Distinct',
      'Top',
      'Take',
      'Take',
      'Sort',
      'Sort',
      'Join',
      'Lookup',
      'MvExpand',
      'MvApply',
      'Parse',
      'Parse',
      'ParseKv',
      'MakeSeries',
      'Serialize',
      'Sample',
      'SampleDistinct',
      'As',
      'GetSchema',
      'TopNested',
      'TopHitters',
      'Scan',
      'Evaluate',
      'Invoke',
      'UnionOp',
      'Consume',
      'Render',
    ])
  })

  it('reads join conditions in both spellings', () => {
    const [join] = ops('L | join kind=leftouter hint.strategy=shuffle (R) on Key, $left.a == $right.b and $right.c == $left.d') as [
      A.JoinOp,
    ]
    assert.deepEqual(
      join.params.map((p) => [p.name, p.value]),
      [
        ['kind', 'leftouter'],
        ['hint.strategy', 'shuffle'],
      ],
    )
    assert.deepEqual(
      join.on.map((c) => [c.left, c.right]),
      [
        ['Key', 'Key'],
        ['a', 'b'],
        ['d', 'c'],
      ],
    )
  })

  it('reads summarize aggregates, tuple names and group keys', () => {
    const [s] = ops('T | summarize n = count(), (t, v) = arg_max(ts, v), avg(x) by bin(ts, 1h), k') as [A.SummarizeOp]
    assert.deepEqual(
      s.aggregates.map((a) => a.names),
      [['n'], ['t', 'v'], []],
    )
    assert.deepEqual(
      s.by.map((b) => sx(b.expr)),
      ['bin(ts, 36000000000t)', 'k'],
    )
  })

  it('reads the scan operator with declare, steps, outputs and assignments', () => {
    const [scan] = ops('T | scan with_match_id=id declare (s:timespan = 0s) with (step a: x > 1 => s = x; step b output=none: true;)') as [
      A.ScanOp,
    ]
    assert.deepEqual(
      scan.declare.map((d) => [d.name, d.type]),
      [['s', 'timespan']],
    )
    assert.deepEqual(
      scan.steps.map((s) => [s.name, s.output, s.assignments.length]),
      [
        ['a', undefined, 1],
        ['b', 'none', 0],
      ],
    )
  })
})

describe('parser: errors name line, column and what was expected', () => {
  it('reports a missing expression', () => {
    const e = syntaxError('T\n| where ')
    assert.equal(e.kind, 'syntax')
    assert.deepEqual([e.position?.line, e.position?.column], [2, 9])
    assert.match(e.message, /expected an expression, found the end of the query/)
  })

  it('reports an unknown operator and a missing by', () => {
    assert.match(syntaxError('T | wher x').message, /line 1, column 5: unknown tabular operator 'wher'/)
    assert.match(syntaxError('T | top 5 x').message, /line 1, column 11: expected 'by' after the number of rows in top, found 'x'/)
    assert.match(syntaxError('T | sort x').message, /expected 'by' after 'sort'/)
  })

  it('reports unbalanced parentheses and stray tokens', () => {
    assert.match(syntaxError('print (1 + 2').message, /expected '\)' to close the parenthesis, found the end of the query/)
    assert.match(syntaxError('print 1 2').message, /line 1, column 9: expected '\|', ';' or the end of the query, found '2'/)
  })

  it('reports bad literals with their text', () => {
    assert.match(syntaxError('print datetime(not a date)').message, /line 1, column 16: invalid datetime literal 'not a date'/)
    assert.match(syntaxError('print int(3000000000)').message, /invalid int literal/)
    assert.match(syntaxError('print guid(123)').message, /invalid guid literal/)
  })

  it('refuses Kusto operators this engine does not implement as unsupported, naming them', () => {
    const e = syntaxError('T | fork (take 1)')
    assert.equal(e.kind, 'unsupported')
    assert.match(e.message, /the 'fork' operator is not supported/)
    const f = syntaxError('find "x"')
    assert.equal(f.kind, 'unsupported')
    assert.match(f.message, /'find' is not supported/)
  })

  it('rejects an empty query', () => {
    assert.match(syntaxError('  // nothing\n').message, /expected a query/)
  })
})
