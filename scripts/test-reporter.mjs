// The project's test reporter (issue 18 item 4): node's own counts and exit code, told honestly.
//
// - Each file's results are printed under its name; the slowest files are listed at the end.
// - A test skipped because a prerequisite is missing is counted as skipped, and its reason is
//   printed once in the summary with how many tests it skipped, not once per test.
// - A known `todo` that fails is listed as a todo, not as a red failure block: node counts it under
//   `todo`, never under `fail`, and the exit code does not depend on it.
// - The counts are the ones node's runner reports in its final diagnostics, unchanged.
// - The slowest files are listed, to keep CI's wall time in view.
import { inspect } from 'node:util'

const colour = process.stdout.isTTY && !process.env['NO_COLOR']
const paint = (code, text) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text)
const red = (t) => paint(31, t)
const green = (t) => paint(32, t)
const yellow = (t) => paint(33, t)
const grey = (t) => paint(90, t)

const root = new URL('..', import.meta.url).pathname
const shortPath = (file) => (file?.startsWith(root) ? file.slice(root.length) : (file ?? '(no file)'))
const ms = (d) => (d >= 1000 ? `${(d / 1000).toFixed(1)} s` : `${Math.round(d)} ms`)

function reasonOf(value) {
  return typeof value === 'string' && value.length > 0 ? value : 'no reason given'
}

function describeError(error) {
  const cause = error?.cause ?? error
  return inspect(cause, { depth: 4, colors: false })
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
}

export default async function* report(source) {
  const fileDurations = []
  const failures = []
  const todos = []
  const skipReasons = new Map()
  const totals = {}
  let currentFile

  // node reports each file's tests in order, a file at a time (only `test:complete` arrives as
  // things finish), so results print as they come under a header naming the file
  const header = (file) => {
    if (file === currentFile || file === undefined) return ''
    currentFile = file
    return `${shortPath(file)}\n`
  }

  for await (const event of source) {
    const data = event.data
    switch (event.type) {
      case 'test:pass':
      case 'test:fail': {
        const isFileItself = data.nesting === 0 && data.name === data.file
        if (isFileItself && event.type === 'test:pass') break
        const indent = '  '.repeat(data.nesting + 1)
        const took = grey(`(${ms(data.details?.duration_ms ?? 0)})`)
        let line
        if (data.skip !== undefined) {
          const reason = reasonOf(data.skip)
          skipReasons.set(reason, (skipReasons.get(reason) ?? 0) + 1)
          line = `${indent}${grey('-')} ${data.name} ${grey(`# skipped: ${reason}`)}`
        } else if (data.todo !== undefined) {
          const outcome = event.type === 'test:fail' ? 'still fails' : 'passes now'
          todos.push({ file: data.file, name: data.name, reason: reasonOf(data.todo), outcome })
          line = `${indent}${yellow('~')} ${data.name} ${yellow(`# todo (${outcome}): ${reasonOf(data.todo)}`)}`
        } else if (event.type === 'test:fail') {
          const isSuite = data.details?.type === 'suite'
          // a suite fails because a test in it failed: only its own error (a hook, say) is news
          const ownError = !isSuite || data.details?.error?.failureType !== 'subtestsFailed'
          if (ownError) failures.push({ file: data.file, name: data.name, error: data.details?.error })
          line = `${indent}${red('✖')} ${data.name} ${took}`
        } else {
          line = `${indent}${green('✔')} ${data.name} ${took}`
        }
        yield `${header(data.file)}${line}\n`
        break
      }
      case 'test:complete':
        if (data.nesting === 0 && data.name === data.file) fileDurations.push({ file: data.file, duration: data.details?.duration_ms ?? 0 })
        break
      case 'test:stdout':
      case 'test:stderr':
        yield `${header(data.file)}${data.message}`
        break
      case 'test:diagnostic':
        if (data.file === undefined && data.nesting === 0) {
          const [key, value] = data.message.split(' ')
          if (value !== undefined && /^[\d.]+$/.test(value)) totals[key] = Number(value)
          else yield `${grey(`# ${data.message}`)}\n`
        } else yield `${header(data.file)}${'  '.repeat(data.nesting + 1)}${grey(`# ${data.message}`)}\n`
        break
      default:
        break
    }
  }

  let out = '\n'
  if (failures.length > 0) {
    out += red(`failures (${failures.length})\n`)
    for (const f of failures) out += `${red('✖')} ${shortPath(f.file)} › ${f.name}\n${describeError(f.error)}\n`
    out += '\n'
  }
  if (todos.length > 0) {
    out += yellow(`known todo (${todos.length}; counted as todo, not as failures)\n`)
    for (const t of todos) out += `  ~ ${shortPath(t.file)} › ${t.name}: ${t.reason} (${t.outcome})\n`
    out += '\n'
  }
  if (skipReasons.size > 0) {
    out += `skipped, with the reason (a missing prerequisite is a skip, never a pass)\n`
    for (const [reason, count] of [...skipReasons].sort((a, b) => b[1] - a[1])) out += `  ${count} × ${reason}\n`
    out += '\n'
  }
  const slowest = fileDurations.sort((a, b) => b.duration - a.duration).slice(0, 15)
  if (slowest.length > 1) {
    out += grey('slowest files\n')
    for (const s of slowest) out += grey(`  ${ms(s.duration).padStart(8)}  ${shortPath(s.file)}\n`)
    out += '\n'
  }
  const count = (k) => totals[k] ?? 0
  const line = [
    `tests ${count('tests')}`,
    `suites ${count('suites')}`,
    (count('fail') > 0 ? red : green)(`pass ${count('pass')}`),
    (count('fail') > 0 ? red : (s) => s)(`fail ${count('fail')}`),
    `cancelled ${count('cancelled')}`,
    `skipped ${count('skipped')}`,
    `todo ${count('todo')}`,
    `duration ${ms(count('duration_ms'))}`,
  ].join(' · ')
  out += `${line}\n`
  yield out
}
