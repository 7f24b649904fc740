/**
 * The judge benchmark's problems (`sandfleet bench judge`): 20 stdin tests of a + b each, in Python or C++, every 5th
 * submission wrong on its last test; and a burst of mixed submissions whose every verdict is known. Each C++ program
 * is new (a comment names its problem, round and run), so the compile cache hits only where a caller repeats one.
 */
import type { JudgeRequest, JudgeVerdict } from '@sandfleet/protocol'

/** The languages the benchmark judges. */
export const JUDGE_BENCH_LANGUAGES = ['python', 'cpp'] as const
/** One of them. */
export type JudgeBenchLanguage = (typeof JUDGE_BENCH_LANGUAGES)[number]

/** Tests of a problem. */
export const TESTS_PER_PROBLEM = 20

/** One problem: its submission, its tests and the verdict the submission earns. */
export interface BenchProblem {
  language: JudgeBenchLanguage
  code: string
  tests: Array<{ stdin: string; expected: string }>
  /** `accepted`, or `wrong_answer` (every 5th: its program is wrong on the last test). */
  verdict: 'accepted' | 'wrong_answer'
}

/** Whether problem `index` gets a submission wrong on its last test (every 5th). */
export const isWrong = (index: number): boolean => index % 5 === 4

/** The last test's first number: the wrong submissions add one there. */
const LAST = TESTS_PER_PROBLEM - 1

const PY_RIGHT = 'a, b = map(int, input().split())\nprint(a + b)\n'
const PY_WRONG = `a, b = map(int, input().split())\nprint(a + b + (1 if a == ${LAST} else 0))\n`

/** The C++ submission: right, or wrong on the last test; `tag` makes its source new. */
function cppSource(wrong: boolean, tag: string): string {
  const expr = wrong ? `a + b + (a == ${LAST} ? 1 : 0)` : 'a + b'
  return `#include <bits/stdc++.h>\nusing namespace std;\n// ${tag}\nint main() { long long a, b; cin >> a >> b; cout << ${expr} << "\\n"; }\n`
}

/** Problem `index` of `language` (`tag` names its round and run: a C++ source is new for each). */
export function benchProblem(language: JudgeBenchLanguage, index: number, tag: string): BenchProblem {
  const wrong = isWrong(index)
  const tests = Array.from({ length: TESTS_PER_PROBLEM }, (_, i) => ({
    stdin: `${i} ${index}\n`,
    expected: `${i + index}\n`
  }))
  const code = language === 'python' ? (wrong ? PY_WRONG : PY_RIGHT) : cppSource(wrong, `problem ${index} ${tag}`)
  return { language, code, tests, verdict: wrong ? 'wrong_answer' : 'accepted' }
}

/** The judge request of a problem. */
export function problemRequest(p: BenchProblem): JudgeRequest {
  return { language: p.language, code: p.code, tests: p.tests, compile_timeout_ms: 120_000 }
}

/** A submission of the burst: its request and the verdict it must get. */
export interface BurstSubmission {
  request: JudgeRequest
  verdict: JudgeVerdict
}

/**
 * `count` submissions of mixed languages and verdicts, every verdict known: accepted and wrong answers in Python and
 * C++, a C++ compile error, a Python time limit, a C runtime error (an abort), a Python runtime error.
 */
export function burst(count: number, tag: string): BurstSubmission[] {
  const kinds: Array<(i: number) => BurstSubmission> = [
    (i) => ({
      request: problemRequest(benchProblem('python', i, tag)),
      verdict: isWrong(i) ? 'wrong_answer' : 'accepted'
    }),
    (i) => ({
      request: problemRequest(benchProblem('cpp', i, `burst ${tag} ${i}`)),
      verdict: isWrong(i) ? 'wrong_answer' : 'accepted'
    }),
    (i) => ({
      request: { language: 'cpp', code: `int main() { undeclared_${i}(); }\n`, tests: [{ stdin: '' }] },
      verdict: 'compile_error'
    }),
    () => ({ request: { code: 'while True: pass\n', tests: [{ stdin: '' }], timeout_ms: 300 }, verdict: 'time_limit' }),
    (i) => ({
      request: {
        language: 'c',
        code: `#include <stdlib.h>\n// ${tag} ${i}\nint main(void) { abort(); }\n`,
        tests: [{ stdin: '' }]
      },
      verdict: 'runtime_error'
    }),
    () => ({
      request: { code: 'raise SystemExit(3)\n', tests: [{ stdin: '', expected: '' }] },
      verdict: 'runtime_error'
    })
  ]
  return Array.from({ length: count }, (_, i) => (kinds[i % kinds.length] as (i: number) => BurstSubmission)(i))
}

/** `lines` as a caller of execute compares: trailing whitespace and blank lines ignored. */
export function sameLines(a: string, b: string): boolean {
  const norm = (t: string): string =>
    t
      .replace(/\r\n/g, '\n')
      .split('\n')
      .map((l) => l.replace(/\s+$/, ''))
      .join('\n')
      .replace(/\n+$/, '')
  return norm(a) === norm(b)
}
