import { test } from 'node:test'
import assert from 'node:assert/strict'
import { benchProgram, commandLine } from '../src/environment.ts'
import { parseBenchArgs } from '../src/options.ts'

test('parameters come from flags, else SANDFLEET_BENCH_* variables, else defaults', () => {
  const { options, positionals } = parseBenchArgs(['trivial-c64', '--duration', '3', '--pool-size=4'], {
    SANDFLEET_BENCH_DURATION: '7',
    SANDFLEET_BENCH_WARMUP: '0.5',
    SANDFLEET_BENCH_URL: 'http://127.0.0.1:9'
  })
  assert.deepEqual(positionals, ['trivial-c64'])
  assert.equal(options.durationS, 3, 'the flag wins over the variable')
  assert.equal(options.warmupS, 0.5, 'the variable wins over the default')
  assert.equal(options.poolSize, 4)
  assert.equal(options.url, 'http://127.0.0.1:9')
  assert.equal(options.batchSize, 64)
  assert.equal(options.backend, 'process')
  assert.deepEqual(options.sizes, [2, 4, 8])
  assert.equal(options.concurrency, undefined, "each scenario's own concurrency unless given")
})

test('bad parameters are all listed in one error; an unknown flag is refused', () => {
  assert.throws(
    () => parseBenchArgs(['x', '--duration', 'soon', '--concurrency', '1.5'], { SANDFLEET_BENCH_SIZES: '2,a' }),
    (err: Error) => /--duration/.test(err.message) && /--concurrency/.test(err.message) && /--sizes/.test(err.message)
  )
  assert.throws(() => parseBenchArgs(['x', '--bogus'], {}), /bogus/)
  assert.throws(() => parseBenchArgs(['soak', '--hostile-share', '1.5'], {}), /--hostile-share .*at most 1/)
  assert.equal(parseBenchArgs(['soak', '--hostile-share', '0.5'], {}).options.run.hostileShare, 0.5)
  assert.equal(parseBenchArgs(['--help'], {}).help, true)
})

test('the command line printed with the figures names the SANDFLEET_ variables set, quoted arguments, not the test filter', () => {
  assert.equal(
    commandLine(['suite', '--python', 'my python'], {
      SANDFLEET_POOL_SIZE: '4',
      SANDFLEET_TEST_FILTER: 'x',
      SANDFLEET_BENCH_URL: '',
      PATH: '/bin',
      npm_lifecycle_event: 'bench'
    }),
    "SANDFLEET_POOL_SIZE=4 npm run bench -- suite --python 'my python'"
  )
})

test('the command line is the program as it was run: what sandfleet bench says, npm run bench, or the entry point', () => {
  assert.equal(
    commandLine(['step', '--calls', '300'], {
      _SANDFLEET_BENCH_COMMAND: 'node bin/sandfleet.mjs bench',
      npm_lifecycle_event: 'test'
    }),
    'node bin/sandfleet.mjs bench step --calls 300'
  )
  assert.equal(benchProgram({ npm_lifecycle_event: 'bench' }), 'npm run bench --')
  assert.equal(
    benchProgram({ npm_lifecycle_event: 'test' }),
    'node --no-node-snapshot --import tsx benchmarks/src/main.ts',
    'under another npm script: the harness itself'
  )
  assert.equal(
    commandLine(['x'], {}, 'node --import tsx benchmarks/src/serve-ab.ts'),
    'node --import tsx benchmarks/src/serve-ab.ts x'
  )
})

test('--engine picks the load generator: wrk (the default where installed) or undici; anything else is refused', () => {
  assert.equal(parseBenchArgs([], {}).options.engine, 'wrk')
  assert.equal(parseBenchArgs(['--engine', 'undici'], {}).options.engine, 'undici')
  assert.equal(parseBenchArgs([], { SANDFLEET_BENCH_ENGINE: 'undici' }).options.engine, 'undici')
  assert.throws(() => parseBenchArgs(['--engine', 'ab'], {}), /--engine: must be one of wrk, undici/)
})
