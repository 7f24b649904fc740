import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Runner } from '../src/runner/runner.ts'
import { runnerConfig } from '../src/config.ts'

test('runner (process driver, real Python): 100 concurrent mixed calls are all answered correctly; a timeout costs the job, not its sandbox', async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 2 }))
  try {
    await runner.start()
    const kinds = (i: number): { code: string; timeout_ms?: number } =>
      [
        { code: `print(${i} * 2)` },
        { code: 'raise ValueError("bad")' },
        { code: 'import sys; sys.exit(3)' },
        { code: 'import sys; print(sys.stdin.read().upper())' }
      ][i % 4]
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => runner.execute({ ...kinds(i), stdin: 'abc', request_id: `r${i}` }))
    )
    results.forEach((r, i) => {
      assert.equal(r.request_id, `r${i}`)
      if (i % 4 === 0) assert.deepEqual([r.status, r.stdout], ['ok', `${i * 2}\n`])
      if (i % 4 === 1) assert.deepEqual([r.status, r.error?.type], ['error', 'ValueError'])
      if (i % 4 === 2) assert.deepEqual([r.status, r.exit_code], ['error', 3])
      if (i % 4 === 3) assert.deepEqual([r.status, r.stdout], ['ok', 'ABC\n'])
    })
    const t = await runner.execute({ code: 'while True: pass', timeout_ms: 200 })
    assert.equal(t.status, 'timeout')
    const after = await Promise.all([runner.execute({ code: 'print(1)' }), runner.execute({ code: 'print(2)' })])
    assert.deepEqual(
      after.map((r) => r.status),
      ['ok', 'ok']
    )
    assert.ok(
      after.some((r) => r.sandbox === t.sandbox),
      'the timed-out sandbox takes the next jobs'
    )
    assert.equal(runner.poolStats()[0].replacements, 0, 'no sandbox was replaced')
  } finally {
    await runner.close()
  }
})

test('runner (process driver): a fork bomb gets a status; its processes are swept and its sandbox serves again', async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1 }))
  try {
    await runner.start()
    const bomb = await runner.execute({
      code: 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass',
      timeout_ms: 1000
    })
    assert.equal(bomb.status, 'timeout')
    const after = await runner.execute({ code: 'print(1)' })
    assert.deepEqual([after.status, after.stdout], ['ok', '1\n'])
    assert.equal(after.sandbox, bomb.sandbox, 'the sweep killed every process of the bomb: the sandbox is kept')
    assert.equal(runner.poolStats()[0].replacements, 0)
  } finally {
    await runner.close()
  }
})

test('runner (process driver): many jobs with large stdins at once, read and not read, are each answered with their status', async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 3, queueTimeoutMs: 300_000 }))
  try {
    await runner.start()
    // 12 jobs of 8-19 MiB given at once to 3 sandboxes: a third read their stdin whole, a third never read it, a third
    // never read it and spin past their timeout_ms.
    const sizes = Array.from({ length: 12 }, (_, i) => (8 + i) * 2 ** 20 + i)
    const codes = [
      'import sys, hashlib\nd = sys.stdin.buffer.read()\nprint(len(d), hashlib.sha256(d).hexdigest()[:8])',
      'print(1)',
      'while True: pass'
    ]
    const results = await Promise.all(
      sizes.map(
        async (n, i) =>
          await runner.execute({
            code: codes[i % 3],
            stdin: String.fromCharCode(97 + i).repeat(n),
            timeout_ms: i % 3 === 2 ? 1000 : 60_000
          })
      )
    )
    const { createHash } = await import('node:crypto')
    results.forEach((r, i) => {
      const expected = [
        [
          'ok',
          `${sizes[i]} ${createHash('sha256')
            .update(String.fromCharCode(97 + i).repeat(sizes[i]))
            .digest('hex')
            .slice(0, 8)}\n`
        ],
        ['ok', '1\n'],
        ['timeout', '']
      ][i % 3]
      assert.deepEqual(
        [r.status, r.stdout],
        expected,
        `job ${i} (${sizes[i]} bytes of stdin): ${r.error?.message ?? ''}`
      )
    })
    assert.equal(runner.poolStats()[0].replacements, 0, 'no sandbox was stopped as unanswering')
  } finally {
    await runner.close()
  }
})
