/**
 * A corpus of judged submissions: every verdict, both test forms (stdin and call, and APPS's input_output), every
 * compare (lines, exact, tokens, float, a checker), the limits, compile errors and compile bombs, the compile cache.
 * Each case: a request, the verdict and each test's verdict it must get, and what else the user would notice.
 */
import assert from 'node:assert/strict'
import type { JudgeRequest, JudgeResult, JudgeTestResult } from '@sandfleet/protocol'

/** One submission and what its judge must say. */
export interface JudgeCase {
  name: string
  request: JudgeRequest
  verdict: JudgeResult['verdict']
  /** Each test's verdict, in order. */
  tests?: Array<JudgeResult['tests'][number]['verdict']>
  /** More checks of the result. */
  check?: (r: JudgeResult) => void
}

const AB_PY = 'a, b = map(int, input().split())\nprint(a + b)\n'
const AB_CPP =
  '#include <bits/stdc++.h>\nusing namespace std;\nint main(){ long long a, b; cin >> a >> b; cout << a + b << "\\n"; }\n'
const AB_TESTS = [
  { stdin: '1 2\n', expected: '3\n' },
  { stdin: '20 22\n', expected: '42\n' },
  { stdin: '-5 5\n', expected: '0\n' }
]
/** A's tests with the second one's expected output wrong. */
const AB_WRONG = [AB_TESTS[0], { stdin: '20 22\n', expected: '43\n' }, AB_TESTS[2]]
const ran = (r: JudgeResult, i: number): JudgeTestResult => {
  const t = r.tests[i]
  assert.notEqual(t.verdict, 'skipped', `test ${i} ran`)
  return t as JudgeTestResult
}

/** The Python cases. */
export const PYTHON_CASES: JudgeCase[] = [
  {
    name: 'python accepted: every test passes, each a fresh process with its own stdin',
    request: { code: AB_PY, tests: AB_TESTS },
    verdict: 'accepted',
    tests: ['accepted', 'accepted', 'accepted'],
    check: (r) => {
      assert.equal(r.passed, 3)
      assert.equal(r.compile?.status, 'ok')
      assert.equal(ran(r, 1).stdout, '42\n')
    }
  },
  {
    name: 'python wrong answer: the first failing test stops the judge, the rest skipped',
    request: { code: AB_PY, tests: AB_WRONG },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer', 'skipped'],
    check: (r) => {
      assert.equal(r.passed, 1)
      assert.equal(ran(r, 1).stdout, '42\n', 'what it printed comes back')
    }
  },
  {
    name: 'python run_all: every test runs past a failure',
    request: { code: AB_PY, tests: AB_WRONG, run_all: true },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer', 'accepted'],
    check: (r) => {
      assert.equal(r.passed, 2)
    }
  },
  {
    name: 'python runtime error: an exception',
    request: {
      code: 'print(1 // int(input()))',
      tests: [
        { stdin: '1', expected: '1' },
        { stdin: '0', expected: '0' }
      ]
    },
    verdict: 'runtime_error',
    tests: ['accepted', 'runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 1).error?.type, 'ZeroDivisionError')
      assert.match(ran(r, 1).stderr, /ZeroDivisionError/)
    }
  },
  {
    name: 'python right output but a non-zero exit is a runtime error',
    request: { code: 'print(3)\nimport sys\nsys.exit(2)', tests: [{ stdin: '', expected: '3\n' }] },
    verdict: 'runtime_error',
    tests: ['runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).exit_code, 2)
      assert.equal(ran(r, 0).stdout, '3\n')
    }
  },
  {
    name: 'python time limit: the test past its deadline is stopped',
    request: { code: 'while True: pass', tests: [{ expected: '' }, { expected: '' }], timeout_ms: 400, run_all: true },
    verdict: 'time_limit',
    tests: ['time_limit', 'time_limit']
  },
  {
    name: 'python memory limit',
    request: { code: 'x = bytearray(512 * 1024 * 1024)\nprint(len(x))', tests: [{ expected: '0' }], memory_mb: 64 },
    verdict: 'memory_limit',
    tests: ['memory_limit']
  },
  {
    name: 'python output limit: a test printing past the cap',
    request: {
      code: 'import sys\nwhile True: sys.stdout.write("y" * 65536)',
      tests: [{ expected: 'y' }],
      timeout_ms: 3000
    },
    verdict: 'output_limit',
    tests: ['output_limit'],
    check: (r) => {
      assert.equal(ran(r, 0).truncated?.stdout, true)
    }
  },
  {
    name: "python compile error: a SyntaxError is the compile step's, no test runs",
    request: { code: 'def f(:\n  pass', tests: AB_TESTS },
    verdict: 'compile_error',
    tests: ['skipped', 'skipped', 'skipped'],
    check: (r) => {
      assert.equal(r.compile?.status, 'error')
      assert.match(r.compile?.stderr ?? '', /SyntaxError/)
    }
  },
  {
    name: 'python call tests (LeetCode): a function of the code and a method of class Solution, values compared as JSON',
    request: {
      code: 'class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, n in enumerate(nums):\n            if target - n in seen:\n                return [seen[target - n], i]\n            seen[n] = i\n',
      tests: [
        { call: { function: 'twoSum', args: [[2, 7, 11, 15], 9] }, expected: [0, 1] },
        { call: { function: 'twoSum', args: [[3, 2, 4], 6] }, expected: [1, 2] },
        { call: { function: 'twoSum', args: [[3, 3], 6] }, expected: [1, 0] }
      ]
    },
    verdict: 'wrong_answer',
    tests: ['accepted', 'accepted', 'wrong_answer'],
    check: (r) => {
      assert.deepEqual(ran(r, 2).returned, [0, 1])
    }
  },
  {
    name: 'python call test whose function prints: its output is not its value',
    request: {
      code: 'def add(a, b):\n    print("debug", a, b)\n    return a + b\n',
      tests: [
        { call: { function: 'add', args: [2, 3] }, expected: 5 },
        { call: { function: 'nope', args: [] }, expected: 1 }
      ]
    },
    verdict: 'runtime_error',
    tests: ['accepted', 'runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).stdout, 'debug 2 3\n')
      assert.equal(ran(r, 1).error?.type, 'NameError')
    }
  },
  {
    name: 'python input_output with fn_name (APPS/TACO): outputs given as [value]',
    request: {
      code: 'def square(n):\n    return n * n\n',
      input_output: { inputs: [[3], [4]], outputs: [[9], [16]], fn_name: 'square' }
    },
    verdict: 'accepted',
    tests: ['accepted', 'accepted']
  },
  {
    name: 'python input_output stdin form, lines given as lists',
    request: { code: AB_PY, input_output: { inputs: [['1 2'], '3 4\n'], outputs: [['3'], '8\n'] } },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer']
  },
  {
    name: 'python float tolerance: within it accepted, past it not',
    request: {
      code: 'print(float(input()) / 3)',
      tests: [
        { stdin: '1', expected: '0.333333' },
        { stdin: '2', expected: '0.67' }
      ],
      compare: { float: 1e-6 },
      run_all: true
    },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer']
  },
  {
    name: 'python tokens and exact compares',
    request: { code: 'print("1   2\\n3")', tests: [{ expected: '1 2 3' }], compare: 'tokens' },
    verdict: 'accepted',
    tests: ['accepted']
  },
  {
    name: 'python exact compare: a trailing space counts',
    request: { code: 'print("3 ")', tests: [{ expected: '3\n' }], compare: 'exact' },
    verdict: 'wrong_answer',
    tests: ['wrong_answer']
  },
  {
    name: 'python checker: any order of the answer accepted, checker INPUT OUTPUT ANSWER',
    request: {
      code: 'n = int(input())\nprint(*range(n, 0, -1))',
      tests: [
        { stdin: '3', expected: '1 2 3' },
        { stdin: '2', expected: '1 2 3' }
      ],
      compare: {
        checker: {
          language: 'python',
          code: 'import sys\ninp, out, ans = (open(p).read().split() for p in sys.argv[1:4])\nsys.exit(0 if sorted(out) == sorted(ans) else 1)\n'
        }
      },
      run_all: true
    },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer'],
    check: (r) => {
      assert.equal(ran(r, 0).checker?.exit_code, 0)
      assert.equal(ran(r, 1).checker?.exit_code, 1)
    }
  },
  {
    name: 'a checker that does not compile says nothing of the program: invalid_request',
    request: { code: AB_PY, tests: AB_TESTS, compare: { checker: { language: 'python', code: 'def (' } } },
    verdict: 'invalid_request',
    check: (r) => {
      assert.equal(r.error?.type, 'SF_ERR_RUNNER_CHECKER')
    }
  },
  {
    name: 'a checker that hangs says nothing of the program: invalid_request',
    request: {
      code: AB_PY,
      tests: AB_TESTS,
      timeout_ms: 300,
      compare: { checker: { language: 'python', code: 'while True: pass' } }
    },
    verdict: 'invalid_request',
    check: (r) => {
      assert.equal(r.error?.type, 'SF_ERR_RUNNER_CHECKER')
    }
  },
  {
    name: 'a test without expected output passes when the program ends well',
    request: { code: 'print(input()[::-1])', tests: [{ stdin: 'abc' }, { stdin: '' }] },
    verdict: 'runtime_error',
    tests: ['accepted', 'runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).stdout, 'cba\n')
      assert.equal(ran(r, 1).error?.type, 'EOFError')
    }
  }
]

/** The C and C++ cases (the sandbox's own g++ and gcc). */
export const COMPILED_CASES: JudgeCase[] = [
  {
    name: 'c++ accepted: bits/stdc++.h compiled once, each test an exec of the binary',
    request: { language: 'cpp', code: AB_CPP, tests: AB_TESTS },
    verdict: 'accepted',
    tests: ['accepted', 'accepted', 'accepted'],
    check: (r) => {
      assert.equal(r.compile?.status, 'ok')
      assert.equal(r.compile?.exit_code, r.compile?.cached === true ? null : 0)
      assert.equal(ran(r, 1).stdout, '42\n')
    }
  },
  {
    name: 'c++ wrong answer stops at the failing test',
    request: { language: 'c++', code: AB_CPP, tests: AB_WRONG },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer', 'skipped']
  },
  {
    name: "c++ compile error: the compiler's message, no test runs",
    request: { language: 'cpp', code: 'int main() { object i = ?; return 0; }\n', tests: AB_TESTS },
    verdict: 'compile_error',
    tests: ['skipped', 'skipped', 'skipped'],
    check: (r) => {
      assert.equal(r.compile?.status, 'error')
      assert.notEqual(r.compile?.exit_code, 0)
      assert.match(r.compile?.stderr ?? '', /object/)
    }
  },
  {
    name: 'c++ segfault is a runtime error with its signal',
    request: { language: 'cpp', code: 'int main(){ volatile int *p = nullptr; *p = 1; }\n', tests: [{ expected: '' }] },
    verdict: 'runtime_error',
    tests: ['runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).signal, 'SIGSEGV')
      assert.equal(ran(r, 0).exit_code, null)
    }
  },
  {
    name: 'c++ assertion: SIGABRT and its message',
    request: { language: 'cpp', code: '#include <cassert>\nint main(){ assert(1 == 2); return 0; }\n', tests: [{}] },
    verdict: 'runtime_error',
    tests: ['runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).signal, 'SIGABRT')
      assert.match(ran(r, 0).stderr, /Assertion `1 == 2' failed/)
    }
  },
  {
    name: 'c++ time limit',
    request: { language: 'cpp', code: 'int main(){ while(1); }\n', tests: [{ expected: '' }], timeout_ms: 400 },
    verdict: 'time_limit',
    tests: ['time_limit']
  },
  {
    name: 'c++ memory limit: an allocation past memory_mb throws bad_alloc',
    request: {
      language: 'cpp',
      code: '#include <vector>\n#include <cstdio>\nint main(){ std::vector<char> v(512u << 20, 1); std::printf("%d\\n", (int)v[7]); }\n',
      tests: [{ expected: '1' }],
      memory_mb: 64
    },
    verdict: 'memory_limit',
    tests: ['memory_limit']
  },
  {
    name: 'c++ output limit',
    request: {
      language: 'cpp',
      code: '#include <cstdio>\nint main(){ for(;;) std::fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\n", stdout); }\n',
      tests: [{ expected: 'y' }],
      timeout_ms: 3000
    },
    verdict: 'output_limit',
    tests: ['output_limit']
  },
  {
    name: 'c++ right output but a non-zero exit is a runtime error',
    request: {
      language: 'cpp',
      code: '#include <cstdio>\nint main(){ std::puts("3"); return 1; }\n',
      tests: [{ expected: '3' }]
    },
    verdict: 'runtime_error',
    tests: ['runtime_error'],
    check: (r) => {
      assert.equal(ran(r, 0).exit_code, 1)
    }
  },
  {
    name: 'c++ binary is a sealed copy: no test can write it',
    request: {
      language: 'cpp',
      code: '#include <cstdio>\nint main(){ FILE *f = std::fopen("/proc/self/exe", "r+b"); std::puts(f ? "writable" : "sealed"); }\n',
      tests: [{ expected: 'sealed' }]
    },
    verdict: 'accepted'
  },
  {
    name: 'compile bomb: #include </dev/zero> is a compile error, never a stuck sandbox',
    request: { language: 'cpp', code: '#include </dev/zero>\nint main(){}\n', tests: [{}], compile_timeout_ms: 8000 },
    verdict: 'compile_error',
    tests: ['skipped']
  },
  {
    name: 'compile bomb: a template recursion past compile_timeout_ms is a compile error (time_limit)',
    request: {
      language: 'cpp',
      code: 'template<int N> struct B { static const long v = B<N-1>::v + B<N-2>::v + 1; };\ntemplate<> struct B<0> { static const long v = 1; };\ntemplate<> struct B<1> { static const long v = 1; };\n#include <cstdio>\nint main(){ std::printf("%ld\\n", B<100000>::v); }\n',
      tests: [{}],
      compile_timeout_ms: 1500
    },
    verdict: 'compile_error',
    check: (r) => {
      assert.ok(['time_limit', 'error', 'memory_limit'].includes(r.compile?.status ?? ''), r.compile?.status)
    }
  },
  {
    name: 'compile bomb: a flood of compiler errors is capped, the sandbox judges on',
    request: {
      language: 'cpp',
      code: `int main(){ ${'undeclared_name_x(); '.repeat(20000)} }\n`,
      tests: [{}],
      compile_timeout_ms: 20000
    },
    verdict: 'compile_error',
    check: (r) => {
      assert.equal(r.compile?.status, 'error')
    }
  },
  {
    name: 'c accepted, linked with libm',
    request: {
      language: 'c',
      code: '#include <stdio.h>\n#include <math.h>\nint main(void){ double x; scanf("%lf", &x); printf("%.3f\\n", sqrt(x)); return 0; }\n',
      tests: [{ stdin: '2', expected: '1.414' }]
    },
    verdict: 'accepted'
  },
  {
    name: 'c++ checker compiled in the sandbox',
    request: {
      language: 'cpp',
      code: AB_CPP,
      tests: [
        { stdin: '1 2', expected: '3' },
        { stdin: '2 2', expected: '5' }
      ],
      compare: {
        checker: {
          language: 'cpp',
          code: '#include <fstream>\nint main(int c, char **v){ std::ifstream o(v[2]), a(v[3]); long x, y; o >> x; a >> y; return x == y ? 0 : 1; }\n'
        }
      },
      run_all: true
    },
    verdict: 'wrong_answer',
    tests: ['accepted', 'wrong_answer']
  }
]
