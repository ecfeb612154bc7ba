// Runs the test files it is given, in the order given, through node's own runner (`run()`), with
// the project's reporter. `node --test FILES` sorts its files; run() keeps the order, which
// run-tests.mjs uses to start the longest suites first. Started by run-tests.mjs under
// `--import tsx`, which node passes on to every test file's process.
import { resolve } from 'node:path'
import { run } from 'node:test'
import report from './test-reporter.mjs'

const concurrency = Number(process.env['PROVENANT_TEST_CONCURRENCY'] ?? 2)
// absolute, as `node --test` reports them: the reporter knows a file's own result by its name
const files = process.argv.slice(2).map((file) => resolve(file))

const stream = run({ files, concurrency })
// node's own rule for the exit code: any failed test that is not a todo (a skipped test never fails)
stream.on('test:fail', (data) => {
  if (data.todo === undefined) process.exitCode = 1
})
stream.compose(report).pipe(process.stdout)
