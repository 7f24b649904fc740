// The judge's core, measured on one runner (issue 43): each figure side by side with its baseline in one run, rounds
// taking turns, so a loaded machine shows as ratios.
//
//   node --no-node-snapshot --import tsx benchmarks/judge-core.ts [cpu] [pch] [hit] [python] [cpp]
//
// - cpu: Python's CPU a test (the test's own, as the kernel counts it), 20-test problems at fork and at reuse.
// - pch: a C++ compile of a bits/stdc++.h program with the sandbox's precompiled header and without it (the same
//   program with <cstdio> first: g++ may use a precompiled header only before any other code), each source new.
// - hit: a judge whose binary the compile cache holds: the whole judge of a one-test problem, and the runner's own part
//   of the compile step (the key's hash and the lookup).
// - python, cpp: problems/s of 20-test problems, 8 in flight, every 5th wrong on its last test: POST /v1/judge against
//   POST /v1/execute/batch of the same 20 runs with the caller comparing (C++: each run compiles, as a caller of
//   execute must), both over HTTP to the runner. Python's rounds at fork also measure the floor under a fresh process
//   a test (the same 20 tests, each run in a fork of the sandboxes' bare interpreter: benchmarks/judge-floor.py) and
//   set the targets beside it as CPU a problem.
//
// - stop: 20-test problems wrong on their first test: how many tests a sandbox ran past the failing one before the
//   runner's stop reached it (sandfleet_runner_judge_tests_past_stop_total), and problems/s against the batch (which
//   runs all 20).
// - burst: 240 submissions at once (Python and C++, a mix of verdicts: accepted, wrong answer, runtime error, time
//   limit, compile error), every verdict checked, none lost.
//
// Env: SANDFLEET_BACKEND (process), POOL (the runner's pool size, default its own), ROUNDS (3), PROBLEMS (16 a round
// for Python, 8 for C++), SAMPLES (20, for cpu, pch and hit), ISOLATION (both: fork and reuse; or one of them).
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { request } from 'undici'
import type { ExecRequest, ExecResult, JudgeRequest, JudgeResult } from '@sandfleet/protocol'
import { CompileCache, Runner, SANDBOX_PATH, buildRunnerApp, compileKeyOf, runnerConfig } from '@sandfleet/runner'
import { sameLines } from './src/workloads/judge-problems.ts'

const parts = new Set(
  process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['cpu', 'pch', 'hit', 'python', 'cpp', 'stop', 'burst']
)
const backend = (process.env.SANDFLEET_BACKEND ?? 'process') as 'process' | 'docker'
const rounds = Number(process.env.ROUNDS ?? 3)
const samples = Number(process.env.SAMPLES ?? 20)
const levels = (process.env.ISOLATION ?? 'fork,reuse').split(',') as Array<'fork' | 'reuse'>
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
const print = (o: object): void => {
  console.log(JSON.stringify(o))
}
print({
  date: new Date().toISOString(),
  commit,
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  load: os.loadavg().map((l) => +l.toFixed(1)),
  backend,
  parts: [...parts]
})

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]
}
const round3 = (x: number): number => +x.toFixed(3)

const config = runnerConfig({
  id: `judge-bench-${process.pid}`,
  backend,
  languages: ['python'],
  maxSessions: 0,
  ...(process.env.POOL === undefined ? {} : { poolSize: Number(process.env.POOL) }),
  maxTimeoutMs: 300_000,
  // a caller of execute compiling C++ in each of 20 runs queues for long: its runs wait, never time out
  queueTimeoutMs: 1_200_000
})
const runner = new Runner(config)
await runner.start()
const app = buildRunnerApp(runner)
const url = await app.listen({ host: '127.0.0.1', port: 0 })
print({ runner: runner.id, poolSize: config.poolSize, url })

const post = async <T>(path: string, body: unknown): Promise<T> => {
  const res = await request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 600_000,
    bodyTimeout: 600_000
  })
  return (await res.body.json()) as T
}

/** 20 tests of a+b: every 5th problem's last expected output is wrong. */
function abTests(problem: number): Array<{ stdin: string; expected: string }> {
  return Array.from({ length: TESTS }, (_, i) => ({
    stdin: `${i} ${problem}\n`,
    expected: `${i + problem + (problem % 5 === 4 && i === 19 ? 1 : 0)}\n`
  }))
}
const AB_PY = 'a, b = map(int, input().split())\nprint(a + b)\n'
/** A C++ a+b, its source new each call (a random comment: the compile cache never holds it). */
const abCpp = (problem: number, first = ''): string =>
  `${first}#include <bits/stdc++.h>\nusing namespace std;\n// problem ${problem} ${process.pid} ${Math.random()}\nint main(){ long long a, b; cin >> a >> b; cout << a + b << "\\n"; }\n`

/** How a caller of execute judges a problem: the 20 runs in one batch, stopping at nothing, compared here. */
async function executeBatchVerdict(requests: ExecRequest[], expected: string[]): Promise<string> {
  const { results } = await post<{ results: ExecResult[] }>('/v1/execute/batch', { requests })
  for (let i = 0; i < results.length; i++) {
    const r = results[i]
    if (r.status !== 'ok') return r.status
    if (!sameLines(r.stdout, expected[i])) return 'wrong_answer'
  }
  return 'accepted'
}

/** Tests a problem. */
const TESTS = 20
/** code-judge's Python problems/s on this machine, as issue 43 measured it, and the multiple the issue asks of us. */
const CODE_JUDGE_PER_S = 6.97
const CODE_JUDGE_MULTIPLE = 15

/**
 * The floor under a fresh Python process a test, on this machine now (benchmarks/judge-floor.py): the CPU of a
 * test run in a fork of the sandboxes' bare interpreter (`python3` on their PATH, nothing preloaded) on its stdin, its
 * output read through a pipe; no limits, isolation or report. In ms.
 */
function processFloorMs(): number {
  const script = fileURLToPath(new URL('./judge-floor.py', import.meta.url))
  const out = execFileSync('python3', ['-I', script, '--tests', '1000', '--code', AB_PY], {
    encoding: 'utf8',
    env: { PATH: SANDBOX_PATH }
  })
  return (JSON.parse(out) as { cpu_ms_per_test: number }).cpu_ms_per_test
}

/**
 * The Python targets of issue 43 as CPU a problem, beside the floor: 2× our batch needs a judge at half the batch's
 * CPU; 15× code-judge needs 15 × 6.97 problems/s, which this machine's cores give only at `cores × 1000 / (that)` ms a
 * problem, fully used. `floorShare`: the part of each target the floor alone takes (what is left of it is all a judge
 * may add to a bare fork and run: limits, isolation, capture, its report and compare).
 */
function floorFigures(floorMs: number, batchMs: number, judgeMs: number): Record<string, number> {
  const twiceBatch = batchMs / 2
  const fifteenCodeJudge = (os.cpus().length * 1000) / (CODE_JUDGE_PER_S * CODE_JUDGE_MULTIPLE)
  return {
    cpuMsPerProblem: round3(floorMs),
    judgeOverFloor: round3(judgeMs / floorMs),
    twiceBatchNeedsMs: round3(twiceBatch),
    fifteenCodeJudgeNeedsMs: round3(fifteenCodeJudge),
    floorShareOfTwiceBatch: round3(floorMs / twiceBatch),
    floorShareOfFifteenCodeJudge: round3(floorMs / fifteenCodeJudge)
  }
}

/** CPU ms of this process and every process below it (the runner, its sandboxes, their jobs), alive or reaped. */
function treeCpuMs(): number {
  const ticks = 100 // USER_HZ
  const parent = new Map<number, number>()
  const cpu = new Map<number, number>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(')').pop()!.trim().split(' ')
      parent.set(Number(d), Number(f[1]))
      cpu.set(Number(d), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]))
    } catch {}
  }
  const below = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p))
      if (p === process.pid) return true
    return false
  }
  let total = 0
  for (const [pid, t] of cpu) if (below(pid)) total += t
  return (total / ticks) * 1000
}

/** Problems/s of `solve` over `count` problems, `inFlight` at once, and the CPU a problem took (every process). */
async function throughput(
  count: number,
  inFlight: number,
  solve: (problem: number) => Promise<string>
): Promise<{ perSecond: number; cpuMsPerProblem: number; verdicts: Record<string, number> }> {
  const verdicts: Record<string, number> = {}
  let next = 0
  const c0 = treeCpuMs()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const p = next++
        const v = await solve(p)
        verdicts[v] = (verdicts[v] ?? 0) + 1
      }
    })
  )
  const perSecond = round3(count / ((performance.now() - t0) / 1000))
  return { perSecond, cpuMsPerProblem: round3((treeCpuMs() - c0) / count), verdicts }
}

try {
  if (parts.has('cpu')) {
    // Python: the CPU of each test as the kernel counts it, 20-test problems, fork and reuse taking turns.
    const cpu: Record<string, number[]> = { fork: [], reuse: [] }
    const wall: Record<string, number[]> = { fork: [], reuse: [] }
    for (let s = 0; s < samples; s++)
      for (const isolation of levels) {
        const t0 = performance.now()
        const r = await runner.judge({ code: AB_PY, tests: abTests(0), isolation })
        wall[isolation].push(performance.now() - t0)
        if (r.verdict !== 'accepted') throw new Error(`cpu: ${JSON.stringify(r).slice(0, 500)}`)
        for (const t of r.tests) if ('cpu_ms' in t && t.cpu_ms !== undefined) cpu[isolation].push(t.cpu_ms)
      }
    print({
      part: 'cpu a Python test (ms, median of each test of every problem)',
      ...Object.fromEntries(levels.map((l) => [l, { cpuMs: round3(median(cpu[l])), tests: cpu[l].length }])),
      judgeWallMs: Object.fromEntries(levels.map((l) => [l, round3(median(wall[l]))]))
    })
  }

  if (parts.has('pch')) {
    // C++: the compile's CPU with the precompiled header and without it, each source new (the cache never hits).
    const cpu: Record<string, number[]> = { pch: [], none: [] }
    const wall: Record<string, number[]> = { pch: [], none: [] }
    for (let s = 0; s < samples; s++)
      for (const [name, first] of [
        ['pch', ''],
        ['none', '#include <cstdio>\n']
      ] as const) {
        const r = await runner.judge({
          language: 'cpp',
          code: abCpp(s, first),
          tests: [{ stdin: '1 2', expected: '3' }],
          compile_timeout_ms: 120_000
        })
        if (r.verdict !== 'accepted' || r.compile?.cached !== false)
          throw new Error(`pch: ${JSON.stringify(r).slice(0, 500)}`)
        cpu[name].push(r.compile.cpu_ms ?? NaN)
        wall[name].push(r.compile.duration_ms)
      }
    const info = runner.info().judge_languages?.find((l) => l.name === 'cpp')
    print({
      part: 'c++ compile of a bits/stdc++.h program (ms, median)',
      precompiledHeaderRead: info?.precompiled_header,
      withPch: { cpuMs: round3(median(cpu.pch)), wallMs: round3(median(wall.pch)) },
      without: { cpuMs: round3(median(cpu.none)), wallMs: round3(median(wall.none)) },
      cpuRatio: round3(median(cpu.pch) / median(cpu.none)),
      samples
    })
  }

  if (parts.has('hit')) {
    // The compile cache: the whole judge of a one-test problem whose binary is cached, and the runner's part of it.
    const code = abCpp(-1)
    const first = await runner.judge({ language: 'cpp', code, tests: [{ stdin: '1 2', expected: '3' }] })
    if (first.compile?.cached !== false) throw new Error('hit: the first compile was cached')
    const judgeMs: number[] = []
    const stepMs: number[] = []
    for (let s = 0; s < samples; s++) {
      const t0 = performance.now()
      const r = await runner.judge({ language: 'cpp', code, tests: [{ stdin: '1 2', expected: '3' }] })
      judgeMs.push(performance.now() - t0)
      if (r.compile?.cached !== true) throw new Error('hit: not cached')
      // what the sandbox spent outside the test: the shipped binary's hand-over, the frames
      stepMs.push(r.duration_ms - (r.tests[0] as { duration_ms: number }).duration_ms)
    }
    // the runner's own part: the key (SHA-256 of its parts) and the lookup
    const cache = new CompileCache(1 << 30)
    const key = { language: 'cpp', version: '12.2.0', argv: ['g++', '-O2'], source: code }
    cache.set(compileKeyOf(key), { binary: Buffer.alloc(17_000), duration_ms: 1000 })
    const n = 10_000
    const t0 = performance.now()
    for (let i = 0; i < n; i++) cache.get(compileKeyOf(key))
    const lookupUs = ((performance.now() - t0) / n) * 1000
    print({
      part: 'compile cache hit (ms, median)',
      judgeOfOneTestMs: round3(median(judgeMs)),
      sandboxBesidesTheTestMs: round3(median(stepMs)),
      runnerKeyAndLookupUs: round3(lookupUs),
      samples
    })
  }

  for (const language of ['python', 'cpp'] as const) {
    if (!parts.has(language)) continue
    const problems = Number(process.env.PROBLEMS ?? (language === 'python' ? 16 : 8))
    for (const isolation of language === 'python' ? levels : (['fork'] as const)) {
      const judged: number[] = []
      const batched: number[] = []
      const judgeCpu: number[] = []
      const batchCpu: number[] = []
      const floorCpu: number[] = []
      const verdicts: Array<Record<string, unknown>> = []
      // one round of each first, not counted (the tiers, the reuse processes and the cache of the compiler warm)
      for (let round = -1; round < rounds; round++) {
        const judgeRound = async (): ReturnType<typeof throughput> =>
          await throughput(problems, 8, async (p) => {
            const tests = abTests(p)
            const body: JudgeRequest =
              language === 'python'
                ? { code: AB_PY, tests, isolation }
                : { language: 'cpp', code: abCpp(p), tests, compile_timeout_ms: 120_000 }
            return (await post<JudgeResult>('/v1/judge', body)).verdict
          })
        const batchRound = async (): ReturnType<typeof throughput> =>
          await throughput(problems, 8, async (p) => {
            const tests = abTests(p)
            const requests: ExecRequest[] =
              language === 'python'
                ? tests.map((t) => ({ code: AB_PY, stdin: t.stdin, isolation }))
                : tests.map((t) => ({
                    code: `import subprocess, sys\nopen('main.cpp', 'w').write(${JSON.stringify(abCpp(p))})\nc = subprocess.run(['g++', '-std=c++17', '-O2', '-DONLINE_JUDGE', '-pipe', '-o', 'main', 'main.cpp'])\nif c.returncode: sys.exit(c.returncode)\nr = subprocess.run(['./main'], input=sys.stdin.read(), text=True, capture_output=True)\nsys.stdout.write(r.stdout)\nsys.exit(r.returncode)\n`,
                    stdin: t.stdin,
                    timeout_ms: 120_000,
                    memory_mb: 2048
                  }))
            return await executeBatchVerdict(
              requests,
              tests.map((t) => t.expected)
            )
          })
        // taking turns, and which goes first too
        const [judge, batch] =
          round % 2 === 0
            ? [await judgeRound(), await batchRound()]
            : await batchRound().then(async (b) => [await judgeRound(), b])
        if (round < 0) continue
        if (language === 'python') floorCpu.push(processFloorMs() * TESTS)
        judged.push(judge.perSecond)
        batched.push(batch.perSecond)
        judgeCpu.push(judge.cpuMsPerProblem)
        batchCpu.push(batch.cpuMsPerProblem)
        verdicts.push({ judge: judge.verdicts, batch: batch.verdicts })
      }
      print({
        part: `${language} problems/s, 20 tests a problem, 8 in flight, every 5th wrong on its last test`,
        isolation,
        judge: judged,
        executeBatch: batched,
        ratio: round3(median(judged) / median(batched)),
        cpuMsPerProblem: { judge: judgeCpu, executeBatch: batchCpu },
        cpuRatio: round3(median(batchCpu) / median(judgeCpu)),
        ...(language === 'python' && isolation === 'fork'
          ? { floor: floorFigures(median(floorCpu), median(batchCpu), median(judgeCpu)) }
          : {}),
        verdicts
      })
    }
  }
  if (parts.has('stop')) {
    const pastStop = async (): Promise<number> => {
      const m = /^sandfleet_runner_judge_tests_past_stop_total\{[^}]*\} (\S+)$/m.exec(await runner.registry.metrics())
      return Number(m?.[1] ?? 0)
    }
    const problems = Number(process.env.PROBLEMS ?? 16)
    for (const isolation of levels) {
      const wrongFirst = (p: number): Array<{ stdin: string; expected: string }> =>
        abTests(p).map((t, i) => (i === 0 ? { ...t, expected: 'no' } : t))
      const before = await pastStop()
      const judge = await throughput(problems, 8, async (p) => {
        return (await post<JudgeResult>('/v1/judge', { code: AB_PY, tests: wrongFirst(p), isolation })).verdict
      })
      const past = (await pastStop()) - before
      const batch = await throughput(problems, 8, async (p) => {
        const tests = wrongFirst(p)
        return await executeBatchVerdict(
          tests.map((t) => ({ code: AB_PY, stdin: t.stdin, isolation })),
          tests.map((t) => t.expected)
        )
      })
      print({
        part: 'python, 20-test problems wrong on their first test: the early stop',
        isolation,
        testsRunPastTheFailureAProblem: round3(past / problems),
        judge: judge.perSecond,
        executeBatch: batch.perSecond,
        ratio: round3(judge.perSecond / batch.perSecond),
        cpuMsPerProblem: { judge: judge.cpuMsPerProblem, executeBatch: batch.cpuMsPerProblem },
        verdicts: { judge: judge.verdicts, batch: batch.verdicts }
      })
    }
  }

  if (parts.has('burst')) {
    // 240 submissions at once, each with the verdict it must get; none may be lost or misjudged.
    const kinds: Array<[JudgeResult['verdict'], (i: number) => JudgeRequest]> = [
      ['accepted', (i) => ({ code: AB_PY, tests: abTests(i % 4 === 4 ? 0 : 1).slice(0, 10) })],
      ['wrong_answer', () => ({ code: AB_PY, tests: abTests(4).slice(10) })],
      ['runtime_error', () => ({ code: 'print(1 // 0)', tests: abTests(0).slice(0, 5) })],
      ['time_limit', () => ({ code: 'while True: pass', tests: abTests(0).slice(0, 3), timeout_ms: 300 })],
      ['compile_error', () => ({ code: 'def f(:', tests: abTests(0).slice(0, 5) })],
      ['accepted', (i) => ({ language: 'cpp', code: abCpp(i % 6), tests: abTests(1).slice(0, 10) })],
      ['compile_error', () => ({ language: 'cpp', code: 'int main( {', tests: abTests(0).slice(0, 3) })]
    ]
    // the C++ sources once, so that the burst's C++ submissions are the compile cache's (6 sources, each 6 times)
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => await runner.judge({ language: 'cpp', code: abCpp(i), tests: [{}] }))
    )
    const t0 = performance.now()
    const all = await Promise.all(
      Array.from({ length: 240 }, async (_, i) => {
        const [want, make] = kinds[i % kinds.length]
        const r = await post<JudgeResult>('/v1/judge', make(i))
        return { want, got: r.verdict }
      })
    )
    const wrong = all.filter((a) => a.want !== a.got)
    const counts: Record<string, number> = {}
    for (const a of all) counts[a.got] = (counts[a.got] ?? 0) + 1
    print({
      part: 'burst: 240 submissions at once',
      seconds: round3((performance.now() - t0) / 1000),
      answered: all.length,
      misjudged: wrong.length,
      verdicts: counts,
      firstMisjudged: wrong.slice(0, 3)
    })
  }
} finally {
  await app.close()
  await runner.close()
}
