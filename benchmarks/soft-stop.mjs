// Wall time of a timed-out call (timeout_ms 1000) against a running fleet (SANDFLEET_URL): code that spins
// (the executor's SIGTERM handler ends it), code whose own SIGTERM handler prints and exits, code that
// ignores SIGTERM (SIGKILL after the soft stop's grace). `SANDFLEET_URL=http://127.0.0.1:8080 node
// benchmarks/soft-stop.mjs`
const url = process.env.SANDFLEET_URL
const cases = {
  spin: 'while True: pass',
  'own handler':
    'import signal, sys\ndef bye(*_):\n    print("bye", flush=True)\n    sys.exit(1)\nsignal.signal(signal.SIGTERM, bye)\nwhile True: pass',
  ignores: 'import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass'
}
for (let round = 0; round < 5; round++) {
  for (const [name, code] of Object.entries(cases)) {
    const t0 = performance.now()
    const res = await fetch(`${url}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, timeout_ms: 1000 })
    })
    const body = await res.json()
    console.log(
      JSON.stringify({
        round,
        name,
        status: body.status,
        stdout: body.stdout,
        wall_ms: Math.round(performance.now() - t0),
        duration_ms: Math.round(body.duration_ms)
      })
    )
  }
}
