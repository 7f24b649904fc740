/**
 * Sessions through `sandfleet serve` over HTTP: a cell `x += 1` at concurrency 1 (p50 ≤ 2 ms),
 * the same at concurrency 16 over 16 sessions (calls/s), and ≥ 500 idle sessions held by one
 * runner with the memory each costs (Pss and private pages summed over the session processes,
 * from /proc/PID/smaps_rollup, and the whole server tree's growth).
 *
 * The sessions scenarios share one fleet started with room for `--sessions` sessions on one key
 * (`--max-sessions`, `--max-sessions-per-key`); with `--url` they use that fleet as it is.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { medianPairedDifference, runInterleaved } from '../interleave.ts'
import { classifyExecute, classifyHttp, runLoad, type LoadReport } from '../load.ts'
import type { Server } from '../fleet.ts'
import { descendants, memoryOf, parentOf } from '../proc-memory.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { fleetNote, serveArgs, type BenchContext, type Scenario } from './context.ts'
import { cpuFigures } from './throughput.ts'

/** Seconds a session keeps its next cell's process ready without a cell (session_host.py's default). */
const SPARE_IDLE_S = 10

const fleets = new WeakMap<BenchContext, Promise<Server>>()

/** The fleet of the sessions scenarios (see the module comment); compat-overhead uses it too. */
export function sessionFleet(ctx: BenchContext): Promise<Server> {
  let f = fleets.get(ctx)
  if (f === undefined) {
    const room = String(ctx.options.sessions + 64)
    f =
      ctx.options.url !== undefined
        ? ctx.fleet()
        : ctx.startFleet([...serveArgs(ctx.options), '--max-sessions', room, '--max-sessions-per-key', room])
    fleets.set(ctx, f)
  }
  return f
}

async function json(url: string, method: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

/** Opens a session and runs `setup` in it; returns its id. */
export async function openSession(server: Server, setup: string): Promise<string> {
  const created = await json(`${server.url}/v1/sessions`, 'POST', { ttl_s: 3600 })
  if (created.status !== 201)
    throw new Error(`POST /v1/sessions answered ${created.status}: ${JSON.stringify(created.body)}`)
  const id = created.body.session_id as string
  const ran = await json(`${server.url}/v1/sessions/${encodeURIComponent(id)}/execute`, 'POST', { code: setup })
  if (ran.status !== 200 || ran.body.status !== 'ok')
    throw new Error(`setup cell answered ${ran.status}: ${JSON.stringify(ran.body)}`)
  return id
}

async function closeSession(server: Server, id: string): Promise<void> {
  await json(`${server.url}/v1/sessions/${encodeURIComponent(id)}`, 'DELETE')
}

const cellPath = (id: string): string => `/v1/sessions/${encodeURIComponent(id)}/execute`

/** `x += 1` in each of `ids` (worker i on session i), closed loop; checks `x` afterwards. */
async function loadCells(ctx: BenchContext, server: Server, ids: string[]): Promise<LoadReport> {
  const { durationS, warmupS, connections } = ctx.options
  ctx.log(
    `  x += 1 → ${server.url}/v1/sessions/:id/execute, ${ids.length} session(s) at concurrency ${ids.length}, ${warmupS} s warm-up + ${durationS} s`
  )
  const report = await runLoad(
    {
      url: server.url,
      path: cellPath(ids[0]),
      paths: ids.map(cellPath),
      body: JSON.stringify({ code: 'x += 1' }),
      callsPerRequest: 1,
      classify: classifyExecute('')
    },
    { concurrency: ids.length, durationS, warmupS, connections, serverPid: server.pid }
  )
  ctx.log(
    `  ${Math.round(report.okCallsPerS)} ok cells/s, p50 ${report.latencyMs.p50.toFixed(2)} ms, outcomes ${JSON.stringify(report.counts)}`
  )
  // The state really moved: x counts at least the cells recorded on its session.
  const x = await json(`${server.url}${cellPath(ids[0])}`, 'POST', { code: 'x' })
  const value = Number(x.body?.display?.[0]?.['text/plain'])
  if (!(value >= report.requests / ids.length))
    throw new Error(`session state did not advance: x = ${String(value)} after ${report.requests} cells`)
  return report
}

/**
 * `x += 1` in one session at concurrency 1: p50 ≤ 2 ms. Interleaved call by call with
 * `print(1+1)` through `/v1/execute` and `GET /healthz` (the HTTP floor), so the three share
 * whatever load the machine has.
 */
export const sessionC1: Scenario = {
  summary:
    'session cell x += 1 through HTTP at concurrency 1 (target: p50 ≤ 2 ms), interleaved with /v1/execute print(1+1) and GET /healthz',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await sessionFleet(ctx)
    const id = await openSession(server, 'x = 0')
    const { durationS, warmupS } = ctx.options
    try {
      ctx.log(
        `  x += 1 → ${server.url}${cellPath(id)}, /v1/execute and /healthz in turn at concurrency 1, ${warmupS} s warm-up + ${durationS} s`
      )
      const r = await runInterleaved(
        server.url,
        [
          {
            name: 'session cell',
            path: cellPath(id),
            body: JSON.stringify({ code: 'x += 1' }),
            classify: classifyExecute('')
          },
          {
            name: '/v1/execute',
            path: '/v1/execute',
            body: JSON.stringify({ code: 'print(1+1)' }),
            classify: classifyExecute('2\n')
          },
          { name: '/healthz', path: '/healthz', body: undefined, classify: classifyHttp() }
        ],
        { durationS, warmupS }
      )
      r.failures.forEach((f, i) => {
        if (f > 0 || r.times[i].length === 0) throw new Error(`session-c1 call ${i}: ${JSON.stringify(r.counts[i])}`)
      })
      const x = await json(`${server.url}${cellPath(id)}`, 'POST', { code: 'x' })
      if (!(Number(x.body?.display?.[0]?.['text/plain']) >= r.times[0].length))
        throw new Error(`session state did not advance: ${JSON.stringify(x.body)}`)
      const [cell, exec, floor] = r.latencyMs
      ctx.log(
        `  session cell p50 ${cell.p50.toFixed(3)} ms, /v1/execute ${exec.p50.toFixed(3)} ms, /healthz ${floor.p50.toFixed(3)} ms over ${cell.n} rounds`
      )
      return {
        figures: [
          {
            scenario: 'session-c1',
            name: `session cell x += 1 p50, concurrency 1 (${cell.n} calls)`,
            value: cell.p50,
            unit: 'ms',
            target: { op: '<=', value: 2 }
          },
          { scenario: 'session-c1', name: 'session cell x += 1 p99', value: cell.p99, unit: 'ms' },
          {
            scenario: 'session-c1',
            name: 'of which the cell in the session (duration_ms) p50',
            value: r.runMs[0].p50,
            unit: 'ms'
          },
          {
            scenario: 'session-c1',
            name: 'beside it: /v1/execute print(1+1) p50 (same rounds)',
            value: exec.p50,
            unit: 'ms'
          },
          {
            scenario: 'session-c1',
            name: 'beside it: HTTP floor, GET /healthz p50 (same rounds)',
            value: floor.p50,
            unit: 'ms'
          },
          {
            scenario: 'session-c1',
            name: 'session cell over the HTTP floor, median of the paired differences',
            value: medianPairedDifference(r.times[0], r.times[2]),
            unit: 'ms'
          },
          {
            scenario: 'session-c1',
            name: 'session cell over /v1/execute print(1+1), median of the paired differences',
            value: medianPairedDifference(r.times[0], r.times[1]),
            unit: 'ms'
          }
        ],
        runs: [],
        notes: [
          fleetNote(server),
          'session-c1: one connection, the session cell, /v1/execute and /healthz called in turn, each round starting at the next one'
        ]
      }
    } finally {
      await closeSession(server, id)
    }
  }
}

/** `x += 1` at concurrency 16, one session per worker: cells/s. */
export const sessionC16: Scenario = {
  summary: 'session cell x += 1 at concurrency 16 over 16 sessions (cells/s)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await sessionFleet(ctx)
    const n = ctx.options.concurrency ?? 16
    const ids: string[] = []
    try {
      for (let i = 0; i < n; i++) ids.push(await openSession(server, 'x = 0'))
      const report = await loadCells(ctx, server, ids)
      return {
        figures: [
          {
            scenario: 'session-c16',
            name: `session cell x += 1 ok cells/s, concurrency ${n} over ${n} sessions`,
            value: report.okCallsPerS,
            unit: 'calls/s'
          },
          {
            scenario: 'session-c16',
            name: `session cell x += 1 p50, concurrency ${n}`,
            value: report.latencyMs.p50,
            unit: 'ms'
          },
          ...cpuFigures('session-c16', report)
        ],
        runs: [{ scenario: 'session-c16', server: 'sandfleet', report }],
        notes: [fleetNote(server)]
      }
    } finally {
      for (const id of ids) await closeSession(server, id)
    }
  }
}

/**
 * `--sessions` (500) idle sessions on one runner, each having run `x = 1`: the memory of their
 * processes (new descendants of the server since the first session), and of the server's tree,
 * right after their cells (each holds its next cell's process ready) and once idle for longer than
 * session_host.py keeps that process.
 */
export const sessionsIdle: Scenario = {
  summary: '--sessions (500) idle sessions held by one runner (target ≥ 500) and the memory per session (Pss, private)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await sessionFleet(ctx)
    const n = ctx.options.sessions
    const notes = [fleetNote(server)]
    if (server.pid === undefined)
      notes.push('memory not measured: the fleet was given by --url, its processes are not known here')
    // The first session starts the session host, so what exists after it is the baseline.
    const first = await openSession(server, 'x = 1')
    const ids = [first]
    try {
      await sleep(500)
      const before = server.pid === undefined ? new Set<number>() : new Set([server.pid, ...descendants(server.pid)])
      const treeBefore = memoryOf(before)
      const t0 = performance.now()
      ctx.log(`  opening ${n} sessions, each running x = 1`)
      for (let i = 0; i < n; i++) ids.push(await openSession(server, 'x = 1'))
      const openMs = (performance.now() - t0) / n
      await sleep(1000)
      // Right after their last cell the sessions still hold their next cell's process ready...
      const recent = server.pid === undefined ? [] : [...descendants(server.pid)].filter((p) => !before.has(p))
      const recentMem = memoryOf(recent)
      // ...which goes after SPARE_IDLE_S (10 s, session_host.py) without a cell.
      ctx.log(
        `  ${n} sessions: ${recent.length} new processes right after their cells, Pss ${recentMem.pssKiB} KiB; waiting ${SPARE_IDLE_S + 1} s`
      )
      await sleep((SPARE_IDLE_S + 1) * 1000)
      const after = server.pid === undefined ? new Set<number>() : new Set([server.pid, ...descendants(server.pid)])
      const fresh = [...after].filter((p) => !before.has(p))
      const sessionsMem = memoryOf(fresh)
      // A session's first process (its namespace's init) has a parent from before; the others descend from it.
      const freshSet = new Set(fresh)
      const inits = fresh.filter((p) => !freshSet.has(parentOf(p) ?? -1))
      const initMem = memoryOf(inits)
      const treeAfter = memoryOf(after)
      const alive = await json(`${server.url}/v1/sessions/${encodeURIComponent(ids[1])}/execute`, 'POST', { code: 'x' })
      if (alive.body?.display?.[0]?.['text/plain'] !== '1')
        throw new Error(`an idle session lost its state: ${JSON.stringify(alive.body)}`)
      ctx.log(
        `  ${n} sessions: ${fresh.length} new processes, Pss ${sessionsMem.pssKiB} KiB, private ${sessionsMem.privateKiB} KiB`
      )
      const figures: Figure[] = [
        {
          scenario: 'sessions-idle',
          name: 'idle sessions held by one runner',
          value: n,
          unit: 'sessions',
          target: { op: '>=', value: 500 }
        },
        { scenario: 'sessions-idle', name: 'open a session and run x = 1, mean', value: openMs, unit: 'ms' }
      ]
      if (server.pid !== undefined) {
        figures.push(
          {
            scenario: 'sessions-idle',
            name: `right after a cell: processes per session (${recent.length} new for ${n})`,
            value: recent.length / n,
            unit: ''
          },
          {
            scenario: 'sessions-idle',
            name: 'right after a cell: Pss per session',
            value: recentMem.pssKiB / n,
            unit: 'KiB'
          },
          {
            scenario: 'sessions-idle',
            name: 'right after a cell: private pages per session',
            value: recentMem.privateKiB / n,
            unit: 'KiB'
          },
          {
            scenario: 'sessions-idle',
            name: `idle ${SPARE_IDLE_S + 1} s: processes per session (${fresh.length} new for ${n})`,
            value: fresh.length / n,
            unit: ''
          },
          {
            scenario: 'sessions-idle',
            name: 'memory per idle session: Pss summed over its processes',
            value: sessionsMem.pssKiB / n,
            unit: 'KiB'
          },
          {
            scenario: 'sessions-idle',
            name: 'memory per idle session: private pages (Private_Clean + Private_Dirty)',
            value: sessionsMem.privateKiB / n,
            unit: 'KiB'
          },
          {
            scenario: 'sessions-idle',
            name: `of which its first process (${inits.length} for ${n}: the namespace init when isolated), private pages`,
            value: initMem.privateKiB / Math.max(1, inits.length),
            unit: 'KiB'
          },
          {
            scenario: 'sessions-idle',
            name: "memory per idle session: growth of the whole server tree's Pss",
            value: (treeAfter.pssKiB - treeBefore.pssKiB) / n,
            unit: 'KiB'
          }
        )
        if (sessionsMem.unreadable > 0)
          notes.push(
            `${sessionsMem.unreadable} session processes' smaps_rollup could not be read (run as root or as the sandbox uid)`
          )
      }
      return { figures, runs: [], notes }
    } finally {
      for (const id of ids) await closeSession(server, id)
    }
  }
}
