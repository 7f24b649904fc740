// E2B's SDK (@e2b/code-interpreter) against `sandfleet serve` (issue 46): what an agent written for E2B waits for.
//
//   node --no-node-snapshot --import tsx benchmarks/e2b-sdk.ts \
//     [--creates 60] [--runs 400] [--live 200] [--live-timeout-s 90] [--backend process]
//
// 1. create → first answer: Sandbox.create, then runCode('1+1') answered, one after the other, `--creates` times
//    (each sandbox killed after, untimed); p50 and p90 of the whole, and of each half.
// 2. runCode('1+1') in one sandbox, `--runs` times after 30 warm-up calls, taking turns with GET /healthz (the
//    gateway's HTTP floor, through the same undici as the SDK: fetch) so both meet the same moment of the machine.
// 3. `--live` sandboxes at once on the one runner (made 16 at a time, each with its own state): every one answers
//    its own state back; then none is left after their timeout (the SDK's list, and the session host's processes
//    back to what they were before them); the memory each held (Pss of the server's tree).
// The machine is shared: the 1-minute load average is printed beside each figure, and the fork probe of the
// harness's environment at the start.
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Sandbox } from '@e2b/code-interpreter'
import { captureEnvironment } from './src/environment.ts'
import { startServe } from './src/fleet.ts'
import { cmdline, descendants, memoryOf } from './src/proc-memory.ts'
import { percentile } from './src/stats.ts'

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '60' },
    runs: { type: 'string', default: '400' },
    live: { type: 'string', default: '200' },
    backend: { type: 'string', default: 'process' },
    'live-timeout-s': { type: 'string', default: '90' }
  }
})
const creates = Number(values.creates)
const runs = Number(values.runs)
const live = Number(values.live)
const liveTimeoutS = Number(values['live-timeout-s'])
const KEY = 'e2b-bench-key-0001'

/** The session host's processes under the server: the host itself, and each sandbox's. */
const sessionProcesses = (pid: number): number =>
  [...descendants(pid)].filter((p) => cmdline(p).includes('session_host.py')).length
const load = (): string => os.loadavg()[0]?.toFixed(1) ?? '?'
const ms = (v: number): string => `${v.toFixed(v < 10 ? 2 : 1)} ms`
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b)
const rows: string[][] = []
const row = (...cells: string[]): void => {
  rows.push(cells)
}

const args = [
  '--backend',
  values.backend,
  '--pool-size',
  '2',
  '--api-keys',
  KEY,
  '--max-sessions',
  String(live + 16),
  '--max-sessions-per-key',
  String(live + 16)
]
const env = await captureEnvironment(
  process.argv.slice(2),
  process.env,
  'node --no-node-snapshot --import tsx benchmarks/e2b-sdk.ts'
)
const server = await startServe(args)
process.env.E2B_API_URL = server.url
process.env.E2B_SANDBOX_URL = server.url
process.env.E2B_API_KEY = KEY
try {
  // the session host starts with the first sandbox: not a figure of a sandbox's create
  await (await Sandbox.create({ timeoutMs: 30_000 })).kill()

  // 1. create → first answer
  const whole: number[] = []
  const made: number[] = []
  const first: number[] = []
  const load1 = load()
  for (let i = 0; i < creates; i++) {
    const t0 = performance.now()
    const sbx = await Sandbox.create({ timeoutMs: 60_000 })
    const t1 = performance.now()
    const answer = await sbx.runCode('1+1')
    const t2 = performance.now()
    if (answer.text !== '2') throw new Error(`create ${i}: answered ${String(answer.text)}`)
    whole.push(t2 - t0)
    made.push(t1 - t0)
    first.push(t2 - t1)
    await sbx.kill()
  }
  const w = sorted(whole)
  row(
    "`Sandbox.create` → first `runCode('1+1')` answer, p50",
    ms(percentile(w, 0.5)),
    '≤ 50 ms',
    percentile(w, 0.5) <= 50 ? 'met' : `missed by ${(percentile(w, 0.5) / 50).toFixed(2)}×`,
    `${load1} → ${load()}`
  )
  row('… p90', ms(percentile(w, 0.9)), '', '', '')
  row('… of which `Sandbox.create` p50', ms(percentile(sorted(made), 0.5)), '', '', '')
  row('… of which the first `runCode` p50', ms(percentile(sorted(first), 0.5)), '', '', '')

  // 2. runCode('1+1') in a warm sandbox, taking turns with the HTTP floor
  const sbx = await Sandbox.create({ timeoutMs: 600_000 })
  for (let i = 0; i < 30; i++) await sbx.runCode('1+1')
  const code: number[] = []
  const floor: number[] = []
  const load2 = load()
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    const answer = await sbx.runCode('1+1')
    const t1 = performance.now()
    if (answer.text !== '2') throw new Error(`run ${i}: answered ${String(answer.text)}`)
    code.push(t1 - t0)
    const t2 = performance.now()
    await (await fetch(`${server.url}/healthz`)).text()
    floor.push(performance.now() - t2)
  }
  await sbx.kill()
  const c = sorted(code)
  row(
    "`runCode('1+1')` p50, one sandbox, one call at a time",
    ms(percentile(c, 0.5)),
    '≤ 5 ms',
    percentile(c, 0.5) <= 5 ? 'met' : `missed by ${(percentile(c, 0.5) / 5).toFixed(2)}×`,
    `${load2} → ${load()}`
  )
  row('… p90', ms(percentile(c, 0.9)), '', '', '')
  row('… beside it, same rounds: `GET /healthz` p50 (HTTP floor)', ms(percentile(sorted(floor), 0.5)), '', '', '')

  // 3. many sandboxes live at once
  const pid = server.pid as number
  const before = memoryOf(descendants(pid))
  const hostBefore = sessionProcesses(pid)
  const load3 = load()
  const boxes: Sandbox[] = []
  const tMake = performance.now()
  for (let i = 0; i < live; i += 16) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(16, live - i) }, async (_, j) => {
        const box = await Sandbox.create({ timeoutMs: liveTimeoutS * 1000 })
        await box.runCode(`mine = ${i + j}`)
        return box
      })
    )
    boxes.push(...batch)
  }
  const makeS = (performance.now() - tMake) / 1000
  const held = memoryOf(descendants(pid))
  const hostHeld = sessionProcesses(pid)
  const answers = await Promise.all(boxes.map(async (box, i) => (await box.runCode('mine')).text === String(i)))
  const answered = answers.filter(Boolean).length
  const listed = (await Sandbox.list({ limit: 100 }).nextItems()).length
  row(
    `sandboxes live at once on one runner, each answering its own state`,
    `${answered} of ${live}`,
    '200',
    answered >= 200 && answered === live ? 'met' : 'missed',
    `${load3} → ${load()}`
  )
  row(`… made (16 at a time, each with a first cell)`, `${makeS.toFixed(1)} s`, '', '', '')
  row(
    "… memory each held: the server tree's Pss growth / sandboxes",
    `${Math.round((held.pssKiB - before.pssKiB) / live).toLocaleString('en')} KiB`,
    '',
    '',
    ''
  )
  row('… session host processes while they live', `${hostHeld} (${hostBefore} before them)`, '', '', '')
  row("… the SDK's list, first page", `${listed}`, '', '', '')

  // … and none left after their timeout
  const deadline = Date.now() + (liveTimeoutS + 60) * 1000
  let left = live
  while (Date.now() < deadline) {
    left = (await Sandbox.list({ limit: 100 }).nextItems()).length
    if (left === 0) break
    await sleep(1000)
  }
  await sleep(2000)
  const hostAfter = sessionProcesses(pid)
  row(
    `after their timeout (${liveTimeoutS} s): sandboxes left`,
    `${left} listed; ${hostAfter} session host processes (${hostBefore} before them)`,
    '0',
    left === 0 && hostAfter <= hostBefore ? 'met' : 'missed',
    load()
  )
} finally {
  await server.close()
}

console.log(`- command: \`${env.command}\``)
console.log(`- server: \`${server.description}\``)
console.log(`- date: ${env.date}, commit ${env.commit}`)
console.log(
  `- machine: ${env.machine.cores} cores (${env.machine.cpu}), ${env.machine.memoryGiB} GiB, Linux ${env.machine.kernel}, node ${env.machine.node}; ` +
    `load average ${env.machine.loadAverage1m} at the start, background CPU ${env.machine.backgroundBusyPct ?? '?'} %, fork probe ${env.machine.forkProbeUs ?? '?'} µs`
)
console.log('')
console.log('| figure | measured | target | verdict | load average (1 min) |')
console.log('| --- | --- | --- | --- | --- |')
for (const r of rows) console.log(`| ${r.join(' | ')} |`)
