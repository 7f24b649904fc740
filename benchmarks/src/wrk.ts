/**
 * The same closed loop as load.ts, driven by wrk (a C load generator, Debian's `wrk`) instead of
 * undici: `concurrency` connections, each with one request in flight, for `warmupS` (a run of its
 * own, not recorded) and then `durationS` (recorded). The targets' numbers are "load generator
 * included" on the same 2 cores: wrk spends ~0.03 ms of CPU per call where the undici loop spends
 * ~0.2–0.4 ms, so more of the machine is left to the fleet under test.
 *
 * Every response is checked, as in load.ts: a Lua `response()` counts each call's outcome (its
 * result `status`, `wrong_output` when stdout is not the expected one, `http_NNN`, `bad_response`)
 * and collects the results' `duration_ms` and `queue_ms`; latencies come from wrk's own histogram.
 * wrk is used when `wrk` is on the PATH (see {@link wrkAvailable}); otherwise load.ts.
 */
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startCpuMeter } from './cpu.ts'
import { usefulShareOf, type LoadReport, type LoadShape } from './load.ts'
import { OutcomeCounter, summarize, type Summary } from './stats.ts'

/** What one request is and what each of its calls must answer. */
export interface WrkTarget {
  url: string
  path: string
  /** JSON body of a `POST`; undefined for a `GET`. */
  body: string | undefined
  /** Calls one request carries (1, or the batch size). */
  callsPerRequest: number
  /** `execute`: one result per response; `batch`: `{"results": [...]}`; `http`: any 200 is ok. */
  kind: 'execute' | 'batch' | 'http'
  /** The stdout every ok result must have. */
  stdout?: string
}

let available: boolean | undefined

/** Whether `wrk` runs here. */
export function wrkAvailable(): boolean {
  if (available === undefined) {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' })
      available = true
    } catch (err) {
      // wrk --version prints its version and exits 1
      available = (err as { status?: number }).status === 1
    }
  }
  return available
}

/** The Lua script: the request, the per-response check, and a JSON summary printed by `done()`. */
function script(target: WrkTarget): string {
  const lua = (s: string): string => JSON.stringify(s) // a JSON string literal is a valid Lua one for these bodies
  const stdoutField = target.stdout === undefined ? 'nil' : lua(`"stdout":${JSON.stringify(target.stdout)}`)
  return `
wrk.method = ${lua(target.body === undefined ? 'GET' : 'POST')}
${target.body === undefined ? '' : `wrk.body = ${lua(target.body)}\nwrk.headers["Content-Type"] = "application/json"`}
local kind, want = ${lua(target.kind)}, ${stdoutField}
counts, run, queue, cpu = {}, {}, {}, { ms = 0, n = 0 }
local function add(k, n) counts[k] = (counts[k] or 0) + (n or 1) end
function response(status, headers, body)
  if status ~= 200 then add("http_" .. status, ${target.callsPerRequest}) return end
  if kind == "http" then add("ok") return end
  -- each result's own keys follow "{" or ","; a string inside a result has its quotes escaped
  local starts, statuses = {}, {}
  for pos, s in body:gmatch('()[{,]"status":"([%a_]+)"') do starts[#starts + 1] = pos; statuses[#statuses + 1] = s end
  local n = #starts
  if n == 0 then add("bad_response", ${target.callsPerRequest}) return end
  for i = 1, n do
    local s = statuses[i]
    if s == "ok" and want ~= nil then
      local a = body:find(want, starts[i], true)
      if a == nil or a >= (starts[i + 1] or #body + 1) then s = "wrong_output" end
    end
    add(s)
  end
  if n < ${target.callsPerRequest} then add("missing_result", ${target.callsPerRequest} - n) end
  for x in body:gmatch('"duration_ms":([%d%.eE+-]+)') do run[#run + 1] = tonumber(x) end
  for x in body:gmatch('"queue_ms":([%d%.eE+-]+)') do queue[#queue + 1] = tonumber(x) end
  for x in body:gmatch('"cpu_ms":([%d%.eE+-]+)') do cpu.ms = cpu.ms + tonumber(x); cpu.n = cpu.n + 1 end
end
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function done(summary, latency, requests)
  local all, runs, queues, cpuMs, cpuN = {}, {}, {}, 0, 0
  for _, t in ipairs(threads) do
    local c = t:get("cpu")
    cpuMs, cpuN = cpuMs + c.ms, cpuN + c.n
    for k, v in pairs(t:get("counts")) do all[k] = (all[k] or 0) + v end
    for _, v in ipairs(t:get("run")) do runs[#runs + 1] = v end
    for _, v in ipairs(t:get("queue")) do queues[#queues + 1] = v end
  end
  local function list(xs) local out = {} for i, v in ipairs(xs) do out[i] = string.format("%.4f", v) end return "[" .. table.concat(out, ",") .. "]" end
  local parts = {}
  for k, v in pairs(all) do parts[#parts + 1] = string.format("%q:%d", k, v) end
  local e = summary.errors
  io.write("SANDFLEET_WRK ", string.format('{"requests":%d,"durationUs":%d,"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},', summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout),
    string.format('"latencyUs":{"min":%d,"mean":%f,"p50":%d,"p90":%d,"p99":%d,"max":%d},', latency.min, latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max),
    '"counts":{', table.concat(parts, ","), '},"run":', list(runs), ',"queue":', list(queues), string.format(',"cpuMs":%.4f,"cpuCalls":%d', cpuMs, cpuN), "}\\n")
end
`
}

interface WrkSummary {
  requests: number
  durationUs: number
  errors: { connect: number; read: number; write: number; timeout: number }
  latencyUs: { min: number; mean: number; p50: number; p90: number; p99: number; max: number }
  counts: Record<string, number>
  run: number[]
  queue: number[]
  /** The sum of the results' `cpu_ms`, and how many carried one. */
  cpuMs: number
  cpuCalls: number
}

/** Runs wrk once; answers its summary and its own CPU (user + system, ms, from the shell's `times`). */
async function wrk(
  target: WrkTarget,
  scriptPath: string,
  concurrency: number,
  seconds: number
): Promise<{ summary: WrkSummary; cpuMs: number }> {
  const args = [
    '-t1',
    `-c${concurrency}`,
    `-d${Math.max(1, Math.round(seconds))}s`,
    '--timeout',
    '120s',
    '-s',
    scriptPath,
    `${target.url}${target.path}`
  ]
  const child = spawn('sh', ['-c', 'wrk "$@"; times', 'sh', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s
  })
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    err += s
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const line = out.split('\n').find((l) => l.startsWith('SANDFLEET_WRK '))
  if (code !== 0 || line === undefined)
    throw new Error(`wrk failed (exit ${String(code)}): ${err.slice(0, 500)}${out.slice(-500)}`)
  // `times`: the shell's own user and system time, then its children's (wrk's): "0m0.010s 0m0.420s"
  const children = out.trim().split('\n').at(-1) ?? ''
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]))
  return {
    summary: JSON.parse(line.slice('SANDFLEET_WRK '.length)) as WrkSummary,
    cpuMs: secs.reduce((a, b) => a + b, 0) * 1000
  }
}

/** Runs the closed loop through wrk; the same report as load.ts's `runLoad`. */
export async function runWrk(target: WrkTarget, shape: LoadShape): Promise<LoadReport> {
  const dir = mkdtempSync(join(tmpdir(), 'sandfleet-wrk-'))
  try {
    const scriptPath = join(dir, 'load.lua')
    writeFileSync(scriptPath, script(target))
    if (shape.warmupS > 0) await wrk(target, scriptPath, shape.concurrency, shape.warmupS)
    const meter = startCpuMeter(shape.serverPid)
    const { summary, cpuMs } = await wrk(target, scriptPath, shape.concurrency, shape.durationS)
    const share = meter.stop()
    const windowS = summary.durationUs / 1e6
    const counts = new OutcomeCounter()
    for (const [k, v] of Object.entries(summary.counts)) counts.add(k, v)
    for (const [k, v] of Object.entries(summary.errors))
      if (v > 0) counts.add(`transport_${k}`, v * target.callsPerRequest)
    const okCalls = counts.get('ok')
    const harnessPct = Math.round((cpuMs / (windowS * 1000 * availableParallelism())) * 1000) / 10
    const ms = (us: number): number => us / 1000
    const lat = summary.latencyUs
    const latencyMs: Summary = {
      n: summary.requests,
      min: ms(lat.min),
      mean: ms(lat.mean),
      p50: ms(lat.p50),
      p90: ms(lat.p90),
      p99: ms(lat.p99),
      max: ms(lat.max)
    }
    return {
      concurrency: shape.concurrency,
      callsPerRequest: target.callsPerRequest,
      windowS,
      requests: summary.requests,
      calls: counts.total,
      okCalls,
      failures: counts.failures(),
      okCallsPerS: okCalls / windowS,
      serverCpuMsPerCall:
        share.serverUserMs === undefined || share.serverKernelMs === undefined || counts.total === 0
          ? undefined
          : (share.serverUserMs + share.serverKernelMs) / counts.total,
      callCpuMs: summary.cpuMs,
      measuredCalls: summary.cpuCalls,
      usefulShare: usefulShareOf(summary.cpuMs, summary.cpuCalls, share),
      latencyMs,
      runMs: summarize(summary.run),
      queueMs: summarize(summary.queue),
      counts: counts.toObject(),
      cpu: { ...share, harnessPct }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
