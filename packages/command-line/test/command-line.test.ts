import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import {
  CommandLineError,
  commandHelp,
  configFlags,
  defineCommand,
  parseCommandLine,
  wrapHelp
} from '@sandfleet/command-line'

const SPEC = defineCommand({
  name: 'sandfleet demo',
  positionals: 'FILE',
  summary: 'a command for the tests',
  flags: {
    'timeout-ms': { type: 'integer', min: 1, help: 'limit' },
    ratio: { type: 'number', default: 0.5, help: 'a share' },
    json: { type: 'boolean', help: 'as JSON' },
    engine: { type: 'list', help: 'engines' },
    mode: { type: 'string', choices: ['fast', 'slow'], env: 'DEMO_MODE', help: 'how' },
    secret: { type: 'string', env: false, help: 'never from the environment' }
  }
})

test('flags: separate and inline values, booleans, lists that add up, camelCase keys, positionals, --', () => {
  const { values, positionals, help } = parseCommandLine(SPEC, [
    'a.py',
    '--timeout-ms',
    '500',
    '--json',
    '--engine=http://a,http://b',
    '--engine',
    'http://c',
    '--',
    '--not-a-flag'
  ])
  assert.equal(help, false)
  assert.deepEqual(values, { timeoutMs: 500, json: true, engine: ['http://a', 'http://b', 'http://c'], ratio: 0.5 })
  assert.deepEqual(positionals, ['a.py', '--not-a-flag'])
})

test('a value that starts with -- but is not a flag is the value (flags passed on to a child process)', () => {
  const { values } = parseCommandLine(SPEC, [
    '--mode=fast',
    '--engine',
    '--max-in-flight 4096',
    '--engine',
    '--pool-size 2 --x'
  ])
  assert.deepEqual(values.engine, ['--max-in-flight 4096', '--pool-size 2 --x'])
  assert.throws(() => parseCommandLine(SPEC, ['--secret', '--json']), /--secret: needs a value/)
})

test('the environment fills flags not given (the command line wins); a variable can be renamed or refused', () => {
  const env = {
    SANDFLEET_TIMEOUT_MS: '9',
    SANDFLEET_RATIO: '0.25',
    DEMO_MODE: 'slow',
    SANDFLEET_SECRET: 'leak',
    SANDFLEET_JSON: ''
  }
  const { values, origin } = parseCommandLine(SPEC, ['--timeout-ms=7'], env)
  assert.deepEqual(values, { timeoutMs: 7, ratio: 0.25, mode: 'slow' })
  assert.deepEqual(origin, { timeoutMs: '--timeout-ms', ratio: 'SANDFLEET_RATIO', mode: 'DEMO_MODE' })
})

test('every problem is listed in one error, each naming its flag or variable', () => {
  assert.throws(
    () =>
      parseCommandLine(SPEC, ['x', 'y', '--timeout-ms', 'soon', '--mode', 'odd', '--bogus', '--ratio'], {
        SANDFLEET_ENGINE: 'a'
      }),
    (err: unknown) => {
      assert.ok(err instanceof CommandLineError)
      assert.equal(err.code, 'SF_ERR_COMMAND_LINE')
      assert.deepEqual(err.problems, [
        '--timeout-ms: needs a whole number, got "soon"',
        '--mode: must be one of fast, slow, got "odd"',
        '--bogus: unknown flag (see --help)',
        '--ratio: needs a value'
      ])
      return true
    }
  )
  assert.throws(() => parseCommandLine(SPEC, ['--timeout-ms', '0']), /--timeout-ms: must be ≥ 1/)
  assert.throws(() => parseCommandLine({ ...SPEC, positionals: undefined }, ['stray']), /unexpected argument "stray"/)
})

test('--help (or -h) anywhere before -- wins over every problem; the help lists each flag, its variable and default', () => {
  assert.equal(parseCommandLine(SPEC, ['--bogus', '--timeout-ms', 'x', '--help']).help, true)
  assert.equal(parseCommandLine(SPEC, ['-h']).help, true)
  assert.equal(parseCommandLine(SPEC, ['--', '--help']).help, false)
  const help = commandHelp(SPEC)
  assert.match(help, /^usage: sandfleet demo FILE \[flags\]/)
  assert.match(help, /--timeout-ms N {3}\[SANDFLEET_TIMEOUT_MS\]\n {6}limit/)
  assert.match(help, /--ratio X .*\n {6}a share \(default 0\.5\)/)
  assert.match(help, /--mode fast\|slow {3}\[DEMO_MODE\]/)
  assert.match(help, /--secret TEXT\n/)
})

test('a config schema becomes flags: names, variables, choices and defaults in the help; values stay text for the loader', () => {
  const schema = Type.Object({
    maxInFlight: Type.Integer({ minimum: 1, default: 4096, description: 'Calls admitted at once' }),
    logLevel: Type.Union([Type.Literal('info'), Type.Literal('warn')], { default: 'info' }),
    runners: Type.Array(Type.String(), { default: [] })
  })
  const spec = defineCommand({ name: 'x', summary: 'y', flags: configFlags(schema) })
  assert.deepEqual(Object.keys(spec.flags), ['max-in-flight', 'log-level', 'runners'])
  assert.deepEqual(parseCommandLine(spec, ['--max-in-flight', 'many', '--runners', 'http://a,http://b']).values, {
    maxInFlight: 'many',
    runners: 'http://a,http://b'
  })
  const help = commandHelp(spec)
  assert.match(
    help,
    /--max-in-flight N {3}\[SANDFLEET_MAX_IN_FLIGHT\]\n {6}Calls admitted at once \[1…\] \(default 4096\)/
  )
  assert.match(help, /--log-level info\|warn/)
  assert.deepEqual(Object.keys(configFlags(schema, { only: ['runners'] })), ['runners'])
})

test('help is wrapped at spaces to the width, a flag never cut, a continuation under its text', () => {
  const spec = defineCommand({
    name: 'sandfleet demo',
    summary: 'A summary long enough to wrap once at forty columns, naming --threshold.',
    flags: {
      threshold: { type: 'string', help: "pass/fail, repeatable: 'p99<2000', 'wrong==0' (metrics: p50 p90 p99 max)" }
    }
  })
  const help = commandHelp(spec, 40)
  for (const line of help.split('\n')) assert.ok(line.length <= 40, `within 40 columns: ${JSON.stringify(line)}`)
  assert.match(help, /(^| )--threshold\.?$/m, 'the flag is whole on one line')
  assert.match(
    help,
    /\n {6}pass\/fail, repeatable: 'p99<2000',\n {6}'wrong==0'/,
    'a description continues at its own indent'
  )
  assert.equal(
    wrapHelp('  step      N calls released at once, over --connections', 30),
    '  step      N calls released\n            at once, over\n            --connections',
    'a table row continues past its term'
  )
  assert.equal(
    wrapHelp('short   [SANDFLEET_X]', 30),
    'short   [SANDFLEET_X]',
    'a line within the width is left as it is'
  )
})
