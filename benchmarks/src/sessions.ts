/**
 * Sessions benchmark: p50/p99 of a session cell `x += 1`, and the memory of N idle sessions held
 * by one runner's session host (proportional set size summed over the session processes).
 * Usage: node --import tsx benchmarks/src/sessions.ts [--sessions 500] [--cells 1000]
 */
import { readFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { execSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import { SessionHost } from '@sandfleet/runner'

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '500' }, cells: { type: 'string', default: '1000' } } })
const sessions = Number(values.sessions)
const cells = Number(values.cells)

function pssBytes (pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
    return m === null ? 0 : Number(m[1]) * 1024
  } catch { return 0 }
}
const pct = (xs: number[], p: number): number => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN

const host = new SessionHost({ runnerId: 'bench', maxSessions: sessions + 1, maxSessionsPerKey: sessions + 1 })
try {
  await host.start()
  const one = await host.create({ ttl_s: 3600 })
  await host.execute(one.session_id, { code: 'x = 0' })
  for (let i = 0; i < 50; i++) await host.execute(one.session_id, { code: 'x += 1' })
  const times: number[] = []
  for (let i = 0; i < cells; i++) {
    const t = performance.now()
    await host.execute(one.session_id, { code: 'x += 1' })
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const ids: string[] = []
  for (let i = 0; i < sessions; i++) {
    const s = await host.create({ ttl_s: 3600 })
    await host.execute(s.session_id, { code: 'x = 1' })
    ids.push(s.session_id)
  }
  const pss = ids.reduce((sum, id) => sum + pssBytes(host.pidOf(id)), 0)
  console.log(JSON.stringify({
    date: new Date().toISOString(),
    commit: execSync('git rev-parse --short HEAD').toString().trim(),
    machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    cell_x_plus_1_ms: { p50: pct(times, 0.5), p99: pct(times, 0.99), n: cells },
    idle_sessions: host.size - 1,
    memory_per_idle_session_kib_pss: Math.round(pss / sessions / 1024)
  }, null, 2))
} finally {
  await host.shutdown()
}
