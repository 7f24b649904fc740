/**
 * Test helpers for the compat suites: a small execution path that really runs Python (one
 * `python3` process per call, in a temporary directory; no sandbox: tests only), the captured
 * samples, and a shape comparison.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import assert from 'node:assert/strict'
import { failedResult, resolveExecRequest, type ExecRequest, type ExecResult } from '@sandfleet/protocol'

/** One captured request/response pair. */
export interface Sample {
  case?: string
  path?: string
  method?: string
  request?: unknown
  http_status: number
  response: any
}

/** Loads a fixture file of captured samples. */
export async function loadSamples(name: 'sandboxfusion' | 'code-judge'): Promise<Sample[]> {
  return JSON.parse(await readFile(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Sample[]
}

/** Loads the captured C and C++ samples of one service (fixtures/cpp.json). */
export async function loadCppSamples(service: 'sandboxfusion' | 'code-judge'): Promise<Sample[]> {
  const all = JSON.parse(await readFile(new URL('./fixtures/cpp.json', import.meta.url), 'utf8')) as Record<
    string,
    Sample[]
  >
  return all[service] ?? []
}

/** Runs a Python request in a plain `python3` child (tests only), answering an ExecResult. */
export async function runPython(request: ExecRequest): Promise<ExecResult> {
  const req = resolveExecRequest(request)
  const dir = await mkdtemp(join(tmpdir(), 'sf-compat-'))
  try {
    for (const [path, b64] of Object.entries(req.files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true })
      await writeFile(join(dir, path), Buffer.from(b64, 'base64'))
    }
    const started = performance.now()
    const child = spawn('python3', ['-c', req.code], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.stdin.end(req.stdin)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, req.timeout_ms)
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
    clearTimeout(timer)
    const files: Record<string, string> = {}
    for (const path of req.fetch_files) {
      try {
        files[path] = (await readFile(join(dir, path))).toString('base64')
      } catch {}
    }
    const status = timedOut ? 'timeout' : code === 0 ? 'ok' : 'error'
    const last = stderr.trim().split('\n').pop() ?? ''
    const m = /^(\w+): ?(.*)$/.exec(last)
    return {
      status,
      stdout,
      stderr,
      exit_code: timedOut ? null : code,
      duration_ms: performance.now() - started,
      queue_ms: 0,
      truncated: { stdout: false, stderr: false },
      error:
        status === 'error' && stderr !== '' ? { type: m?.[1] ?? last, message: m?.[2] ?? '', traceback: stderr } : null,
      files,
      runner: 'test-runner',
      sandbox: 'test-0'
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** An execution path that answers every call with a fleet status (nothing runs). */
export function fleetFault(
  status: 'overloaded' | 'queue_timeout' | 'infra_error' | 'invalid_request',
  message = 'the fleet said no'
): (r: ExecRequest) => Promise<ExecResult> {
  return async () => failedResult(status, `SF_ERR_TEST_${status.toUpperCase()}`, message)
}

/**
 * Asserts `actual` has the shape of `expected`: the same keys at every level, the same JSON
 * types (a number where a number was, null where null was), arrays compared item by item.
 * Paths in `loose` only need to exist.
 */
export function assertSameShape(
  actual: unknown,
  expected: unknown,
  path = '$',
  loose: ReadonlySet<string> = new Set()
): void {
  if (loose.has(path)) return
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
  assert.equal(kind(actual), kind(expected), `${path}: expected a ${kind(expected)}, got ${JSON.stringify(actual)}`)
  if (Array.isArray(expected)) {
    const a = actual as unknown[]
    assert.equal(a.length, expected.length, `${path}: length`)
    expected.forEach((e, i) => assertSameShape(a[i], e, `${path}[${i}]`, loose))
  } else if (kind(expected) === 'object') {
    const a = actual as Record<string, unknown>
    const e = expected as Record<string, unknown>
    assert.deepEqual(Object.keys(a).sort(), Object.keys(e).sort(), `${path}: keys`)
    for (const k of Object.keys(e)) assertSameShape(a[k], e[k], `${path}.${k}`, loose)
  }
}
