/**
 * The judge benchmark's problems hold what they claim: 20 tests of a + b, every 5th submission wrong on its last test
 * only, a C++ source new for each tag, and a burst whose every submission's verdict is known. Checked with python3
 * and g++ on this machine (no sandbox: the programs are the benchmark's own).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchProblem, burst, isWrong, sameLines } from '../../src/workloads/judge-problems.ts'
import { parseBenchArgs } from '../../src/options.ts'

function run(argv: string[], stdin: string, cwd: string): string {
  return execFileSync(argv[0] as string, argv.slice(1), { input: stdin, cwd, encoding: 'utf8' })
}

test('a problem has 20 tests; its submission fails exactly its last test when it is a 5th one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-judge-bench-'))
  try {
    for (const index of [0, 4]) {
      const py = benchProblem('python', index, 't')
      const cpp = benchProblem('cpp', index, 't')
      assert.equal(py.tests.length, 20)
      assert.equal(py.verdict, isWrong(index) ? 'wrong_answer' : 'accepted')
      writeFileSync(join(dir, 'main.py'), py.code)
      writeFileSync(join(dir, 'main.cpp'), cpp.code)
      execFileSync('g++', ['-O0', '-o', 'main', 'main.cpp'], { cwd: dir })
      for (const [i, t] of py.tests.entries()) {
        const right = !(isWrong(index) && i === 19)
        assert.equal(
          sameLines(run(['python3', 'main.py'], t.stdin, dir), t.expected),
          right,
          `python ${index} test ${i}`
        )
        assert.equal(sameLines(run(['./main'], t.stdin, dir), t.expected), right, `c++ ${index} test ${i}`)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  assert.notEqual(benchProblem('cpp', 1, 'a').code, benchProblem('cpp', 1, 'b').code, 'a new source for each tag')
})

test('the burst mixes every kind of verdict; the flags reach the judge scenario', () => {
  const subs = burst(240, 't')
  const kinds = new Set(subs.map((s) => s.verdict))
  assert.deepEqual([...kinds].sort(), ['accepted', 'compile_error', 'runtime_error', 'time_limit', 'wrong_answer'])
  assert.equal(subs.length, 240)
  const { options } = parseBenchArgs(
    [
      'judge',
      '--code-judge-url',
      'http://127.0.0.1:1',
      '--problems',
      '4',
      '--judge-languages',
      'cpp',
      '--submissions',
      '0'
    ],
    {}
  )
  assert.deepEqual(options.judge, {
    codeJudgeUrl: 'http://127.0.0.1:1',
    sandboxFusionUrl: undefined,
    problems: 4,
    languages: ['cpp'],
    submissions: 0
  })
  assert.throws(() => parseBenchArgs(['judge', '--judge-languages', 'cobol'], {}), /cobol is not one of python, cpp/)
})
