// Many jobs with large stdins at once on one runner (issue 37, item 7): every job's status, the
// executor's duration_ms (its run time) and the call's wall time. Half the jobs read their stdin
// whole, half print(1) and never read it.
//
//   SANDFLEET_BACKEND=docker JOBS=19 MB=20 POOL=4 node --no-node-snapshot --import tsx benchmarks/large-stdin.ts
//
// EXECUTOR: the executor.py to run (default: this checkout's; docker binds it over the image's).
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import { Runner, runnerConfig } from '@sandfleet/runner'

const backend = (process.env.SANDFLEET_BACKEND ?? 'docker') as 'docker' | 'process'
const jobs = Number(process.env.JOBS ?? 19)
const mb = Number(process.env.MB ?? 20)
const poolSize = Number(process.env.POOL ?? 4)
const timeoutMs = Number(process.env.TIMEOUT_MS ?? 10_000)
const executorPath =
  process.env.EXECUTOR ?? fileURLToPath(new URL('../sandbox-images/python/executor.py', import.meta.url))
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    commit,
    cpus: os.cpus().length,
    load: os.loadavg().map((l) => +l.toFixed(1)),
    backend,
    jobs,
    mb,
    poolSize,
    timeoutMs,
    executorPath
  })
)

const runner = new Runner(
  runnerConfig({
    id: `large-stdin-${process.pid}`,
    backend,
    languages: ['python'],
    poolSize,
    maxSessions: 0,
    queueTimeoutMs: 600_000,
    executorPath
  })
)
await runner.start()
try {
  const t0 = performance.now()
  const results = await Promise.all(
    Array.from({ length: jobs }, async (_, i) => {
      const reads = i % 2 === 0
      const started = performance.now()
      const r = await runner.execute({
        code: reads ? 'import sys\nprint(len(sys.stdin.buffer.read()))' : 'print(1)',
        stdin: 'x'.repeat(mb * 2 ** 20),
        timeout_ms: timeoutMs
      })
      const wrong = r.stdout !== (reads ? `${mb * 2 ** 20}\n` : '1\n')
      return {
        i,
        reads,
        status: r.status,
        wrong,
        duration_ms: Math.round(r.duration_ms),
        queue_ms: Math.round(r.queue_ms),
        wall_ms: Math.round(performance.now() - started),
        error: r.error?.message?.slice(0, 120)
      }
    })
  )
  for (const r of results) console.log(JSON.stringify(r))
  const statuses: Record<string, number> = {}
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1
  const runs = results.map((r) => r.duration_ms).sort((a, b) => a - b)
  console.log(
    JSON.stringify({
      summary: true,
      statuses,
      wrong_stdout: results.filter((r) => r.wrong && r.status === 'ok').length,
      duration_ms_median: runs[Math.floor(runs.length / 2)],
      duration_ms_max: runs[runs.length - 1],
      wall_s: +((performance.now() - t0) / 1000).toFixed(1),
      replacements: runner.poolStats()[0].replacements
    })
  )
} finally {
  await runner.close()
}
