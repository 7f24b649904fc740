// Probe (not production code): the cost of one runner ↔ host round trip of a job-sized frame
// (the pyodide leak probe's exec request and its result) through three channels to a child Node
// process: fork() IPC with serialization 'json', fork() IPC with 'advanced' (structured clone),
// and NDJSON over a pipe on fd 3 (what the pyodide driver uses, frame-pipe.ts's framing).
// Rounds are interleaved (a, b, c, a, b, c, …) so the load of a shared machine falls on each alike.
// Per channel: wall time per round trip with 1 and with 16 frames in flight, and CPU per round trip
// of the parent and of the child (from /proc, over the round only).
// Run: node scripts/pyodide-host-ipc-probe.mjs [roundTrips=5000] [rounds=5]
import { execFileSync, fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { cpus, loadavg } from 'node:os'

const [, , role, how] = process.argv
const exec = {
  op: 'exec',
  n: 0,
  sandbox: 'pyodide-python-3',
  job: {
    request: {
      code: 'import builtins\nprint(hasattr(builtins, "sf_mark"))\nbuiltins.sf_mark = 1',
      stdin: '',
      timeout_ms: 30000,
      memory_mb: 256,
      files: {},
      fetch_files: [],
      language: 'python'
    },
    maxOutputBytes: 65536
  }
}
const reply = (n) => ({
  op: 'reply',
  n,
  outcome: {
    status: 'ok',
    stdout: 'False\n',
    stderr: '',
    exit_code: 0,
    duration_ms: 1.2345,
    truncated: { stdout: false, stderr: false },
    error: null,
    files: {}
  },
  stats: { jobs: 12, memoryBytes: 66744876 }
})

/** NDJSON lines of a stream, to `onFrame`. */
function lines(stream, onFrame) {
  let buffered = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk) => {
    buffered += chunk
    let nl
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      onFrame(JSON.parse(line))
    }
  })
}

if (role === 'child') {
  if (how === 'pipe') {
    const socket = new Socket({ fd: 3, readable: true, writable: true })
    lines(socket, (m) => {
      socket.write(JSON.stringify(reply(m.n)) + '\n')
    })
  } else {
    process.on('message', (m) => {
      process.send(reply(m.n))
    })
    process.on('disconnect', () => process.exit(0))
  }
} else {
  const N = Number(role ?? 5000)
  const ROUNDS = Number(how ?? 5)
  const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  const cpuMs = (pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return ((Number(f[11]) + Number(f[12])) * 1000) / hz
  }
  const self = new URL(import.meta.url).pathname
  const channels = {}
  for (const mode of ['json', 'advanced', 'pipe']) {
    let child, send, setHandler
    if (mode === 'pipe') {
      child = spawn(process.execPath, [self, 'child', 'pipe'], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] })
      let handler
      lines(child.stdio[3], (m) => handler(m))
      send = (m) => child.stdio[3].write(JSON.stringify(m) + '\n')
      setHandler = (f) => {
        handler = f
      }
    } else {
      child = fork(self, ['child', mode], { serialization: mode, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      send = (m) => child.send(m)
      setHandler = (f) => {
        child.removeAllListeners('message')
        child.on('message', f)
      }
    }
    channels[mode] = { child, send, setHandler, runs: [] }
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  const run = async (ch, inFlight) => {
    let sent = 0
    let done = 0
    const c0 = [cpuMs(process.pid), cpuMs(ch.child.pid)]
    const t0 = performance.now()
    await new Promise((resolve) => {
      ch.setHandler(() => {
        if (++done === N) resolve()
        else if (sent < N) {
          ch.send({ ...exec, n: ++sent })
        }
      })
      for (let i = 0; i < inFlight; i++) ch.send({ ...exec, n: ++sent })
    })
    const wall = performance.now() - t0
    return {
      us: (wall * 1000) / N,
      parentUs: ((cpuMs(process.pid) - c0[0]) * 1000) / N,
      childUs: ((cpuMs(ch.child.pid) - c0[1]) * 1000) / N
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const ch of Object.values(channels)) ch.runs.push({ c1: await run(ch, 1), c16: await run(ch, 16) })
  }
  let commit = '?'
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {}
  console.log(
    `# ${new Date().toISOString()}, commit ${commit}, ${cpus().length} cores, node ${process.version}, load ${loadavg()[0].toFixed(2)} at the end; ${N} round trips a run, ${ROUNDS} interleaved rounds, medians`
  )
  const med = (xs) => {
    const s = [...xs].sort((a, b) => a - b)
    return s[Math.floor(s.length / 2)]
  }
  console.log(
    '| channel | µs per round trip, 1 in flight | µs, 16 in flight | CPU µs per round trip at 1: parent + child | at 16 |'
  )
  console.log('| --- | --- | --- | --- | --- |')
  for (const [mode, ch] of Object.entries(channels)) {
    const c1 = med(ch.runs.map((x) => x.c1.us))
    const c16 = med(ch.runs.map((x) => x.c16.us))
    const cpu = (k) => {
      const p = med(ch.runs.map((x) => x[k].parentUs))
      const c = med(ch.runs.map((x) => x[k].childUs))
      return `${p.toFixed(0)} + ${c.toFixed(0)} = ${(p + c).toFixed(0)}`
    }
    console.log(
      `| ${mode === 'pipe' ? 'NDJSON over fd 3' : `fork() IPC, ${mode}`} | ${c1.toFixed(0)} | ${c16.toFixed(1)} | ${cpu('c1')} | ${cpu('c16')} |`
    )
    if (mode === 'pipe') ch.child.kill()
    else ch.child.disconnect()
  }
}
