/**
 * The fleet across hosts, measured: deploy/fleet.sh's containers (runners behind one DNS alias,
 * two gateways with --runners-dns), load from this host through both gateways.
 *
 *   node --no-node-snapshot --import tsx benchmarks/src/fleet-hosts.ts \
 *     [--seconds 20] [--concurrency 16] [--sleep-ms 100]
 *
 * 1. Failover: trivial calls at --concurrency for --seconds; one runner SIGKILLed halfway.
 *    p50/p99 latency of the calls sent in the 5 s before the kill against those sent in the 5 s
 *    after it (the added latency), calls retried (the gateways' sandfleet_gateway_retries_total),
 *    calls not answered ok with their own output (must be 0).
 * 2. Scaling: a sleep workload (`time.sleep(--sleep-ms)`, so fleet capacity and not CPU is
 *    measured) with 3 runners, then with 1 (two removed), each for --seconds: calls/s and the ratio.
 * Prints machine, date and commit beside the figures (Markdown, for benchmarks/RESULTS.md).
 */
import { execFileSync } from 'node:child_process'
import { cpus, loadavg, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import { callLoad, gatewayRetries, quantile, type CallRecord } from './docker-fleet/call-load.ts'
import { DockerFleet, readyRunners, waitFor } from './docker-fleet/docker-fleet.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '16' },
    'sleep-ms': { type: 'string', default: '100' },
    'pool-size': { type: 'string', default: '2' }
  }
})
const seconds = Number(values.seconds)
const concurrency = Number(values.concurrency)
const sleepMs = Number(values['sleep-ms'])
const poolSize = Number(values['pool-size'])

const fleet = new DockerFleet({
  name: `sfmh-bench${process.pid}`,
  image: 'sfmh-fleet:bench',
  secret: `sfmh-bench-secret-${process.pid}-0123456789`,
  runnerArgs: `--pool-size ${poolSize} --languages python --max-sessions 0`,
  gatewayArgs: '--dns-refresh-ms 1000 --load-poll-ms 250',
  runnerDockerArgs: '--memory 1g --cpus 1'
})

const ms = (n: number): string => `${Math.round(n)} ms`

async function ready(gateways: string[], count: number): Promise<void> {
  await waitFor(
    `${count} ready runners`,
    async () => (await Promise.all(gateways.map(readyRunners))).every((ids) => ids.length === count),
    300_000,
    250
  )
}

async function timed(
  gateways: string[],
  prelude?: string,
  during?: (elapsedMs: number) => void
): Promise<{ records: CallRecord[]; wallMs: number }> {
  const start = performance.now()
  const end = start + seconds * 1000
  const timer =
    during === undefined
      ? undefined
      : setInterval(() => {
          during(performance.now() - start)
        }, 50)
  const records = await callLoad({ gateways, concurrency, stop: () => performance.now() > end, prelude })
  if (timer !== undefined) clearInterval(timer)
  return { records, wallMs: performance.now() - start }
}

async function main(): Promise<void> {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  console.log(
    `# fleet across hosts: ${new Date().toISOString()}, commit ${commit}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`
  )
  console.log(
    `runners: process backend, pool ${poolSize}, --cpus 1 each; 2 gateways; concurrency ${concurrency}; ${seconds} s a phase`
  )
  try {
    const gateways = await fleet.up(3, 2)
    await ready(gateways, 3)
    await callLoad({ gateways, concurrency, calls: 200 }) // warm

    // 1. failover
    const [victim] = await fleet.runners()
    const retriesBefore = (await Promise.all(gateways.map(gatewayRetries))).reduce((a, b) => a + b, 0)
    let killAt = Infinity
    let killing: Promise<void> | undefined
    const base = performance.now()
    const { records } = await timed(gateways, undefined, (elapsed) => {
      if (killing === undefined && elapsed > seconds * 500) {
        killAt = performance.now()
        killing = fleet.kill(victim.container, 'KILL')
      }
    })
    await killing
    const retries = (await Promise.all(gateways.map(gatewayRetries))).reduce((a, b) => a + b, 0) - retriesBefore
    const before = records.filter((r) => r.sentAt >= killAt - 5000 && r.sentAt < killAt).map((r) => r.latencyMs)
    const afterKill = records.filter((r) => r.sentAt >= killAt && r.sentAt < killAt + 5000).map((r) => r.latencyMs)
    const wrong = records.filter((r) => !r.correct).length
    console.log('\n| failover (1 of 3 runners SIGKILLed) | calls | p50 | p99 | max |\n| --- | --- | --- | --- | --- |')
    console.log(
      `| 5 s before the kill | ${before.length} | ${ms(quantile(before, 0.5))} | ${ms(quantile(before, 0.99))} | ${ms(Math.max(...before))} |`
    )
    console.log(
      `| 5 s from the kill | ${afterKill.length} | ${ms(quantile(afterKill, 0.5))} | ${ms(quantile(afterKill, 0.99))} | ${ms(Math.max(...afterKill))} |`
    )
    console.log(
      `\np99 added by the failover: ${ms(quantile(afterKill, 0.99) - quantile(before, 0.99))}; calls retried on another runner: ${retries}; calls in the phase: ${records.length} (kill at ${ms(killAt - base)}); not ok or wrong: ${wrong}`
    )
    await fleet.remove(victim.container)
    await fleet.addRunner()
    await ready(gateways, 3)

    // 2. scaling on a sleep workload
    const prelude = `import time; time.sleep(${sleepMs / 1000})`
    const three = await timed(gateways, prelude)
    const runners = await fleet.runners()
    for (const r of runners.slice(1)) await fleet.remove(r.container)
    await ready(gateways, 1)
    const one = await timed(gateways, prelude)
    const rate = (t: { records: CallRecord[]; wallMs: number }): number =>
      t.records.filter((r) => r.correct).length / (t.wallMs / 1000)
    const bad = [...three.records, ...one.records].filter((r) => !r.correct).length
    console.log(
      `\n| sleep ${sleepMs} ms, concurrency ${concurrency} | calls/s | p50 | p99 | ideal (sandboxes / sleep) |\n| --- | --- | --- | --- | --- |`
    )
    for (const [n, t] of [
      [1, one],
      [3, three]
    ] as const) {
      const l = t.records.map((r) => r.latencyMs)
      console.log(
        `| ${n} runner${n > 1 ? 's' : ''} | ${rate(t).toFixed(1)} | ${ms(quantile(l, 0.5))} | ${ms(quantile(l, 0.99))} | ${((n * poolSize * 1000) / sleepMs).toFixed(0)} |`
      )
    }
    console.log(`\n3 runners / 1 runner: ${(rate(three) / rate(one)).toFixed(2)}×; not ok or wrong: ${bad}`)
  } finally {
    await fleet.down()
  }
}

await main()
