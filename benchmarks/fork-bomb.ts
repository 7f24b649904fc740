// A fork bomb's verdict and its answer time, with a neighbour beside it: what the hard deadline's blame decides
// (`timeout`, the code's, whether the sandbox stopped the job itself or the pool found the job filling the sandbox's
// limits; never `infra_error` stalled).
//
//   node --no-node-snapshot --import tsx benchmarks/fork-bomb.ts [--bombs 25] [--backend docker] [--isolation fork]
//
// `sandfleet serve` with 2 sandboxes; each round a fork bomb (`timeout_ms` 1000) and, at once, a neighbour (a 50 ms
// print) on the other sandbox. Counts the bombs' verdicts by who stopped them (the sandbox's own stop, or the pool at
// the hard deadline, `exhausted`) and every other answer; p50, p90 and the longest answer of the bombs; the neighbours'
// statuses. The machine is shared: the 1-minute load average is printed at the start and the end.
import os from 'node:os'
import { parseArgs } from 'node:util'
import { captureEnvironment } from './src/environment.ts'
import { startServe } from './src/fleet.ts'
import { percentile } from './src/stats.ts'

const { values } = parseArgs({
  options: {
    bombs: { type: 'string', default: '25' },
    backend: { type: 'string', default: 'docker' },
    isolation: { type: 'string', default: 'fork' }
  }
})
const bombs = Number(values.bombs)
const load = (): string => os.loadavg()[0]?.toFixed(1) ?? '?'
const BOMB = 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass'
const NEIGHBOUR = 'import time\ntime.sleep(0.05)\nprint("n")'

interface Answer {
  status: string
  stdout: string
  error?: { type?: string; message?: string }
}

async function execute(url: string, code: string, timeoutMs: number): Promise<{ answer: Answer; ms: number }> {
  const t0 = performance.now()
  const response = await fetch(`${url}/v1/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, timeout_ms: timeoutMs })
  })
  const answer = (await response.json()) as Answer
  return { answer, ms: performance.now() - t0 }
}

const env = await captureEnvironment(
  process.argv.slice(2),
  process.env,
  'node --no-node-snapshot --import tsx benchmarks/fork-bomb.ts'
)
const server = await startServe(['--backend', values.backend, '--isolation', values.isolation, '--pool-size', '2'])
const startLoad = load()
const verdicts = new Map<string, number>()
const neighbours = new Map<string, number>()
const times: number[] = []
try {
  for (let i = 0; i < bombs; i++) {
    const [bomb, neighbour] = await Promise.all([
      execute(server.url, BOMB, 1000),
      execute(server.url, NEIGHBOUR, 20_000)
    ])
    const by = bomb.answer.error?.message?.includes('kept its sandbox from stopping it') === true ? ' (exhausted)' : ''
    const key = `${bomb.answer.status} ${bomb.answer.error?.type ?? ''}${by}`
    verdicts.set(key, (verdicts.get(key) ?? 0) + 1)
    const nkey = `${neighbour.answer.status} ${neighbour.answer.stdout === 'n\n' ? 'right output' : 'wrong output'}`
    neighbours.set(nkey, (neighbours.get(nkey) ?? 0) + 1)
    times.push(bomb.ms)
  }
} finally {
  await server.close()
}
times.sort((a, b) => a - b)
const m = env.machine
console.log(`# ${env.date}, commit ${env.commit}: ${server.description}`)
console.log(`# ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.kernel}, Node ${m.node}`)
console.log(`load average ${startLoad} → ${load()}; ${bombs} bombs at timeout_ms 1000`)
console.log('| bombs answered | count |\n| --- | --- |')
for (const [k, n] of verdicts) console.log(`| ${k} | ${n} |`)
console.log('| neighbours | count |\n| --- | --- |')
for (const [k, n] of neighbours) console.log(`| ${k} | ${n} |`)
console.log(
  `bomb answer ms: p50 ${percentile(times, 0.5).toFixed(0)}, p90 ${percentile(times, 0.9).toFixed(0)}, max ${times.at(-1)?.toFixed(0) ?? '?'}`
)
