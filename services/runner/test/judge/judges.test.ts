/**
 * The runner's judging (judges.ts) with a scripted probe: the languages it lists, each with its version number bare,
 * whatever the version command printed around it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ExecResult, Language } from '@sandfleet/protocol'
import { Judges, versionNumberOf } from '../../src/judge/judges.ts'
import type { Driver, PooledJob } from '../../src/sandbox/contract.ts'

test('a version number is the bare number of what a version command printed', () => {
  assert.equal(versionNumberOf('Python 3.11.2'), '3.11.2')
  assert.equal(versionNumberOf('12.2.0'), '12.2.0')
  assert.equal(versionNumberOf('gcc (Debian 12.2.0-14) 12.2.0'), '12.2.0')
  assert.equal(versionNumberOf('11.3.244.8-node.38'), '11.3.244.8')
  assert.equal(versionNumberOf('no version here'), undefined)
})

/** Judges over a Python pool that judges and a javascript pool, whose probe's job answers `found` (raw lines). */
function judgesProbing(found: Record<string, { version: string; pch?: boolean }>): {
  judges: Judges
  jobs: PooledJob[]
} {
  const jobs: PooledJob[] = []
  const drivers = new Map<Language, Driver>([
    ['python', { judges: true } as unknown as Driver],
    ['javascript', { judges: false } as unknown as Driver]
  ])
  const judges = new Judges({
    drivers: () => drivers,
    submit: (job: PooledJob, done: (result: ExecResult) => void) => {
      jobs.push(job)
      done({
        status: 'ok',
        stdout: JSON.stringify(found),
        stderr: '',
        exit_code: 0,
        duration_ms: 1,
        queue_ms: 0,
        truncated: { stdout: false, stderr: false },
        error: null,
        files: {},
        runner: 'r',
        sandbox: 's'
      })
    },
    queueTimeoutMs: 10_000,
    cacheBytes: 1 << 20,
    maxOutputBytes: 1 << 16,
    echoBytes: 1 << 16,
    javascriptVersion: '11.3.244.8-node.38'
  })
  return { judges, jobs }
}

test("every language's version in the runner's info is a bare version number", async () => {
  const { judges, jobs } = judgesProbing({
    python: { version: 'Python 3.11.2' },
    cpp: { version: '12.2.0', pch: true },
    c: { version: '12.2.0' }
  })
  const before = judges.info()
  assert.deepEqual(
    before.map((l) => l.version),
    ['unknown', 'unknown', 'unknown', '11.3.244.8'],
    'unknown until the probe has read them'
  )
  await judges.probe()
  assert.equal(jobs.length, 1)
  const info = judges.info()
  assert.deepEqual(
    info.map((l) => `${l.name} ${l.version}`),
    ['python 3.11.2', 'cpp 12.2.0', 'c 12.2.0', 'javascript 11.3.244.8']
  )
  for (const l of info) assert.match(l.version, /^\d+(\.\d+)*$/, `${l.name}: ${l.version}`)
  assert.equal(info.find((l) => l.name === 'cpp')?.precompiled_header, true)
})

test('a language whose version command printed no version number is not taken as found', async () => {
  const { judges } = judgesProbing({ python: { version: 'Python 3.11.2' }, cpp: { version: 'g++: not here' } })
  const found = await judges.probe()
  assert.deepEqual([...found.keys()], ['python'])
  assert.deepEqual(
    judges.info().map((l) => l.name),
    ['python', 'javascript']
  )
})
