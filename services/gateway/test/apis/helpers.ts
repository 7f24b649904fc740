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

/** A compiler error's or an assertion's words, the paths and quotes that differ naturally set aside. */
function messageWords(text: string): string {
  return (text.match(/(error: .*|Assertion `.*' failed\.)/)?.[0] ?? text).replace(/‘|’/g, "'")
}

/**
 * Asserts a code-judge answer to a captured C++ sample has the sample's shape and values: `success`, `run_success`,
 * `reason`, stdout, a compile error's `cost` 0, and the words of a compiler's error or an assertion in stderr.
 */
export function assertCodeJudgeCpp(body: any, sample: Sample): void {
  assertSameShape(body, sample.response)
  const pairs: Array<[any, any]> = Array.isArray(sample.response.results)
    ? sample.response.results.map((w: any, i: number) => [body.results[i], w])
    : [[body, sample.response]]
  for (const [got, want] of pairs) {
    assert.deepEqual([got.success, got.run_success, got.reason], [want.success, want.run_success, want.reason])
    if ('stdout' in want) assert.equal(got.stdout, want.stdout)
    if (want.cost === 0) assert.equal(got.cost, 0, 'a compile error costs no run time')
    if ('stderr' in want && want.stderr !== '') assert.equal(messageWords(got.stderr), messageWords(want.stderr))
  }
}

/**
 * Asserts a SandboxFusion answer to a captured C or C++ sample has the sample's shape and values: the status, the
 * compile step's status and success, `run_result` present or null, the run's status, return code and stdout, an
 * assertion's message, a compiler's error; a 422's items.
 */
export function assertSandboxFusionCpp(body: any, sample: Sample): void {
  // the pod differs; a 422's list of languages is the fleet's own
  assertSameShape(body, sample.response, '$', new Set(['$.executor_pod_name', '$.detail[0].msg', '$.detail[0].ctx']))
  const want = sample.response
  if (sample.http_status !== 200) {
    assert.deepEqual(
      body.detail.map((d: any) => [d.type, d.loc, d.input]),
      want.detail.map((d: any) => [d.type, d.loc, d.input])
    )
    return
  }
  assert.equal(body.status, want.status)
  assert.deepEqual(
    [body.compile_result?.status, body.compile_result?.return_code === 0],
    [want.compile_result?.status, want.compile_result?.return_code === 0]
  )
  assert.equal(body.run_result === null, want.run_result === null)
  if (want.run_result !== null) {
    assert.deepEqual(
      [body.run_result.status, body.run_result.return_code, body.run_result.stdout],
      [want.run_result.status, want.run_result.return_code, want.run_result.stdout]
    )
    if (want.run_result.stderr !== '')
      assert.equal(messageWords(body.run_result.stderr), messageWords(want.run_result.stderr))
  }
  if (want.compile_result?.stderr)
    assert.equal(messageWords(body.compile_result.stderr), messageWords(want.compile_result.stderr))
}
