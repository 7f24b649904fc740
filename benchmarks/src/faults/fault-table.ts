/**
 * Issue 44's table, run again: a fleet of 3 runners and 2 gateways (processes of this checkout,
 * the process backend; one runner in a network namespace of its own, which a partition cuts),
 * calls of a 50 ms `print` at --concurrency in flight through both gateways, one fault a row,
 * every answer checked:
 *
 *   node --no-node-snapshot --import tsx benchmarks/src/faults/fault-table.ts \
 *     [--concurrency 64] [--before-s 3] [--after-s 4] [--pause-s 8] [--partition-s 10,40] [--rows all]
 *
 * For each row: the calls and how they were answered (right: `ok` with the call's own output;
 * `timeout` must be 0: the code never runs past its `timeout_ms`), how long after the fault the
 * calls its runner held were answered, and the retries, after the fault is undone, of every call
 * that may have run (the same request under the same `request_id`, through the other gateway,
 * naming the runner the answer named): replayed (its first run's answer), run once (it had not
 * run), and the calls that ran twice (runs that ended `ok` on the runners, against the calls
 * answered `ok`). Root only (namespaces, iptables). Prints machine, date and commit beside the
 * figures (Markdown, for benchmarks/RESULTS.md).
 */
import { execFileSync } from 'node:child_process'
import { cpus, loadavg, totalmem } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { quantile } from '../docker-fleet/call-load.ts'
import { FaultFleet, faultFleetProblem } from './process-fleet.ts'
import { runFault, type FaultRun } from './fault-run.ts'

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '64' },
    'before-s': { type: 'string', default: '3' },
    'after-s': { type: 'string', default: '4' },
    'pause-s': { type: 'string', default: '8' },
    'partition-s': { type: 'string', default: '10,40' },
    'pool-size': { type: 'string', default: '4' },
    rows: { type: 'string', default: 'none,kill,pause,partition,gateway' }
  }
})
const concurrency = Number(values.concurrency)
const beforeMs = Number(values['before-s']) * 1000
const afterMs = Number(values['after-s']) * 1000
const rows = new Set((values.rows ?? '').split(','))
const LOAD = { concurrency, prelude: 'import time; time.sleep(0.05)', timeoutMs: 5000 }

/** Waits until each gateway sends calls to every runner in `ids` (probes end `error`: `ok` runs stay the load's). */
async function recovered(fleet: FaultFleet, ids: readonly string[]): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 250) {
    const seen = new Set<string>()
    await Promise.all(
      fleet.gateways
        .filter((g) => g.child.exitCode === null && g.child.signalCode === null)
        .flatMap((g) =>
          Array.from({ length: 3 * ids.length }, async () => {
            const res = await fetch(`${g.url}/v1/execute`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ code: 'import time; time.sleep(0.3); raise SystemExit(3)' })
            })
            seen.add(`${g.id}/${((await res.json()) as { runner: string }).runner}`)
          })
        )
    )
    if (fleet.gateways.every((g) => g.child.exitCode !== null || ids.every((id) => seen.has(`${g.id}/${id}`)))) return
    await sleep(250)
  }
  throw new Error(`runners ${ids.join(', ')} did not come back`)
}

const ms = (n: number): string => `${(n / 1000).toFixed(2)} s`

/** One row of the table. */
function row(fault: string, run: FaultRun, faulted: string | undefined): string {
  const { records, retries } = run
  const right = records.filter((r) => r.correct).length
  const timeouts = records.filter((r) => r.status === 'timeout').length
  const others = new Map<string, number>()
  for (const r of records) {
    if (r.correct) continue
    const what =
      r.status === 'infra_error'
        ? `infra_error ${r.type ?? ''} maybe_ran ${String(r.maybeRan)}`
        : r.status === 'no_answer'
          ? 'no answer (connection error)'
          : `${r.status} ${r.type ?? ''}`
    others.set(what, (others.get(what) ?? 0) + 1)
  }
  const held = records.filter((r) => faulted !== undefined && r.runner === faulted && r.status !== 'ok')
  const after = held.map((r) => r.sentAt + r.latencyMs - run.faultAt)
  const answered =
    held.length === 0
      ? '–'
      : `${held.length} calls, all within ${ms(Math.max(...after))} (p50 ${ms(quantile(after, 0.5))})`
  const retried = [...retries.values()]
  const replayed = retried.filter((r) => r.replayed === true).length
  const once = retried.filter((r) => r.status === 'ok' && r.replayed !== true).length
  const okIds = new Set(
    [...records.filter((r) => r.status === 'ok'), ...retried.filter((r) => r.status === 'ok')].map((r) => r.requestId)
  )
  const twice = run.okRuns === undefined ? 'n/a (a runner died with its runs)' : String(run.okRuns - okIds.size)
  const p99 = quantile(
    records.map((r) => r.latencyMs),
    0.99
  )
  return `| ${fault} | ${records.length} | ${right} | ${timeouts} | ${[...others].map(([k, v]) => `${v} ${k}`).join('; ') || '–'} | ${answered} | ${run.gatewayRetries} | ${retried.length === 0 ? '–' : `${retried.length}: ${replayed} replayed, ${once} ran once, ${retried.length - replayed - once} other`} | ${twice} | ${ms(p99)} |`
}

async function main(): Promise<void> {
  const problem = await faultFleetProblem()
  if (problem !== undefined) throw new Error(`the fault table cannot run here: ${problem}`)
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  console.log(
    `# issue 44's faults: ${new Date().toISOString()}, commit ${commit}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`
  )
  console.log(
    `3 runners (process backend, --pool-size ${values['pool-size']}, one in a network namespace of its own), 2 gateways (--load-poll-ms 250 --runner-silence-ms 2000); a 50 ms print at ${concurrency} in flight through both gateways, timeout_ms 5000; ${values['before-s']} s of load before each fault, ${values['after-s']} s after it is undone\n`
  )
  console.log(
    '| fault (mid-load) | calls | right | `timeout` | other answers | calls the faulted runner held, answered after the fault | tried again by the gateways (surely not run, or runner died) | retried after (may have run) | ran twice | p99 |'
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  const start = async (): Promise<FaultFleet> => {
    const fleet = await FaultFleet.start({
      name: `ft${process.pid % 10_000}`,
      runners: 3,
      gateways: 2,
      isolated: [1],
      runnerArgs: [
        '--backend',
        'process',
        '--languages',
        'python',
        '--pool-size',
        values['pool-size'] ?? '4',
        '--max-sessions',
        '0'
      ],
      gatewayArgs: ['--load-poll-ms', '250', '--runner-silence-ms', '2000']
    })
    await recovered(
      fleet,
      fleet.runners.map((r) => r.id)
    )
    return fleet
  }
  const each = async (
    fault: string,
    go: (fleet: FaultFleet, ids: string[]) => Promise<[FaultRun, string | undefined]>
  ): Promise<void> => {
    const fleet = await start()
    try {
      const [run, faulted] = await go(
        fleet,
        fleet.runners.map((r) => r.id)
      )
      console.log(row(fault, run, faulted))
    } finally {
      await fleet.close()
    }
  }
  const base = { ...LOAD, beforeMs, afterMs }
  if (rows.has('none'))
    await each('none', async (fleet) => [await runFault(fleet, { ...base, faultMs: 0, fault: () => {} }), undefined])
  if (rows.has('kill'))
    await each('SIGKILL a runner (all its processes)', async (fleet, [, , r3]) => [
      await runFault(fleet, { ...base, faultMs: 2000, fault: () => fleet.kill(r3) }),
      r3
    ])
  if (rows.has('pause')) {
    const s = Number(values['pause-s'])
    await each(`SIGSTOP a runner ${s} s (all its processes, as docker pause)`, async (fleet, ids) => [
      await runFault(fleet, {
        ...base,
        faultMs: s * 1000,
        fault: () => fleet.pause(ids[0]),
        undo: () => fleet.resume(ids[0]),
        recovered: async () => await recovered(fleet, ids)
      }),
      ids[0]
    ])
  }
  if (rows.has('partition'))
    for (const s of (values['partition-s'] ?? '').split(',').map(Number)) {
      await each(`partition a runner ${s} s (iptables DROP in its namespace)`, async (fleet, ids) => [
        await runFault(fleet, {
          ...base,
          faultMs: s * 1000,
          fault: async () => await fleet.cut(ids[1]),
          undo: async () => await fleet.heal(ids[1]),
          recovered: async () => await recovered(fleet, ids)
        }),
        ids[1]
      ])
    }
  if (rows.has('gateway'))
    await each('SIGKILL a gateway', async (fleet) => [
      await runFault(fleet, { ...base, faultMs: 2000, fault: () => fleet.killGateway('gateway-1') }),
      undefined
    ])
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  }
)
