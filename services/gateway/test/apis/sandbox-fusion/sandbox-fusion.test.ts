import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { failedResult, type ExecResult } from '@sandfleet/protocol'
import { sandboxFusionCompat } from '../../../src/apis/sandbox-fusion/sandbox-fusion.ts'
import type { CompatSessions } from '../../../src/apis/compat.ts'
import { assertSameShape, fleetFault, loadSamples, runPython, type Sample } from '../helpers.ts'

// Values that naturally differ: the pod, the driver's config dump, a traceback's lines (ANSI-coloured IPython frames
// there).
const LOOSE = new Set(['$.executor_pod_name', '$.driver.stdout', '$.cells[1].error[0].traceback'])

/** Scripted sessions: what a session's cells answer, keyed by the cell's code. */
function scriptedSessions(log: string[]): CompatSessions {
  const ok = (extra: Partial<ExecResult> = {}): ExecResult => ({
    ...failedResult('ok', '', ''),
    error: null,
    exit_code: 0,
    runner: 'r1',
    sandbox: 's1',
    ...extra
  })
  const cells: Record<string, ExecResult> = {
    'x = 40': ok(),
    'x + 2': ok({ display: [{ 'text/plain': '42' }] }),
    'print(x * 2)': ok({ stdout: '80\n' }),
    'y = 1': ok(),
    '1/0': ok({
      status: 'error',
      exit_code: 1,
      stderr: 'Traceback (most recent call last):\n  Cell In[2], line 1\nZeroDivisionError: division by zero\n',
      error: {
        type: 'ZeroDivisionError',
        message: 'division by zero',
        traceback: 'Traceback (most recent call last):\n  Cell In[2], line 1\nZeroDivisionError: division by zero\n'
      }
    }),
    'print(y)': ok({ stdout: '1\n' }),
    'while True: pass': ok({ status: 'timeout', exit_code: null }),
    boom: failedResult('infra_error', 'SF_ERR_TEST', 'sandbox died')
  }
  let n = 0
  return {
    async create() {
      log.push('create')
      return `session-${++n}`
    },
    async execute(id, cell) {
      log.push(`${id}:${cell.code}`)
      return cells[cell.code] ?? ok()
    },
    async close(id) {
      log.push(`close:${id}`)
    }
  }
}

let app: FastifyInstance
const log: string[] = []
before(async () => {
  app = Fastify()
  await app.register(sandboxFusionCompat, { execute: runPython, sessions: scriptedSessions(log) })
})
after(async () => {
  await app.close()
})

const post = async (url: string, payload: unknown): Promise<{ statusCode: number; body: any }> => {
  const res = await app.inject({ method: 'POST', url, payload: payload as object })
  return { statusCode: res.statusCode, body: res.json() }
}

for (const sample of await loadSamples('sandboxfusion')) {
  test(`SandboxFusion sample "${sample.case}" gets the captured shape, status and values`, async () => {
    const url = sample.case?.startsWith('jupyter') === true ? '/run_jupyter' : '/run_code'
    const { statusCode, body } = await post(url, sample.request)
    assert.equal(statusCode, sample.http_status)
    assertSameShape(body, sample.response, '$', LOOSE)
    compareValues(sample, body)
  })
}

function compareValues(sample: Sample, body: any): void {
  const want = sample.response
  if (sample.http_status !== 200) {
    assert.deepEqual(
      body.detail.map((d: any) => [d.type, d.loc]),
      want.detail.map((d: any) => [d.type, d.loc])
    )
    return
  }
  assert.equal(body.status, want.status)
  assert.equal(body.message, want.message)
  assert.deepEqual(body.files, want.files)
  if (want.run_result !== undefined) {
    assert.equal(body.run_result.status, want.run_result.status)
    assert.equal(body.run_result.return_code, want.run_result.return_code)
    assert.equal(body.run_result.stdout, want.run_result.stdout)
    const lastLine = (s: string): string => s.trim().split('\n').pop() ?? ''
    assert.equal(lastLine(body.run_result.stderr), lastLine(want.run_result.stderr))
  }
  if (want.cells !== undefined) {
    assert.deepEqual(
      body.cells.map((c: any) => [c.stdout, c.display, c.error.map((e: any) => [e.ename, e.evalue])]),
      want.cells.map((c: any) => [c.stdout, c.display, c.error.map((e: any) => [e.ename, e.evalue])])
    )
  }
}

test('the fields verl and SkyRL send and SandboxFusion ignores are accepted (extra keys, nulls, numeric strings)', async () => {
  const { statusCode, body } = await post('/run_code', {
    code: 'print(1)',
    language: 'python',
    run_timeout: '10',
    compile_timeout: 10,
    memory_limit_MB: -1,
    stdin: null,
    files: null,
    fetch_files: [],
    extra_field: 'ignored',
    kernel: 'python3'
  })
  assert.equal(statusCode, 200)
  assert.equal(body.status, 'Success')
  assert.equal(body.run_result.stdout, '1\n')
})

test('nodejs is accepted as SandboxFusion spells JavaScript', async () => {
  let seen: string | undefined
  const js = Fastify()
  try {
    await js.register(sandboxFusionCompat, {
      execute: async (r) => {
        seen = r.language
        return { ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout: 'hi\n' }
      }
    })
    const res = await js.inject({
      method: 'POST',
      url: '/run_code',
      payload: { code: 'console.log("hi")', language: 'nodejs' }
    })
    assert.equal(res.json().status, 'Success')
    assert.equal(seen, 'javascript')
  } finally {
    await js.close()
  }
})

test('bad input answers 422 with FastAPI detail naming the field', async () => {
  const cases: Array<[unknown, string, Array<string | number>]> = [
    [{ language: 'python' }, 'missing', ['body', 'code']],
    [{ code: 1, language: 'python' }, 'string_type', ['body', 'code']],
    [{ code: 'x', language: 'python', run_timeout: 'soon' }, 'float_type', ['body', 'run_timeout']],
    [{ code: 'x', language: 'python', files: { 'a.txt': 3 } }, 'string_type', ['body', 'files', 'a.txt']],
    [{ code: 'x', language: 'python', fetch_files: 'a' }, 'list_type', ['body', 'fetch_files']],
    [[1, 2], 'model_attributes_type', ['body']]
  ]
  for (const [payload, type, loc] of cases) {
    const { statusCode, body } = await post('/run_code', payload)
    assert.equal(statusCode, 422, JSON.stringify(payload))
    assert.equal(body.detail[0].type, type)
    assert.deepEqual(body.detail[0].loc, loc)
  }
  const res = await app.inject({
    method: 'POST',
    url: '/run_code',
    payload: '{"code": ',
    headers: { 'content-type': 'application/json' }
  })
  assert.equal(res.statusCode, 422)
  assert.equal(res.json().detail[0].type, 'json_invalid')
  const cells = await post('/run_jupyter', { cells: 'x = 1' })
  assert.equal(cells.statusCode, 422)
  assert.deepEqual(cells.body.detail[0].loc, ['body', 'cells'])
})

for (const status of ['overloaded', 'queue_timeout', 'infra_error'] as const) {
  test(`a fleet ${status} is SandboxError with the reason, never a user Failed`, async () => {
    const faulty = Fastify()
    try {
      await faulty.register(sandboxFusionCompat, { execute: fleetFault(status, 'no sandbox free') })
      const body = (
        await faulty.inject({ method: 'POST', url: '/run_code', payload: { code: 'print(1)', language: 'python' } })
      ).json()
      assert.equal(body.status, 'SandboxError')
      assert.equal(body.run_result, null)
      assert.match(body.message, new RegExp(`${status}: no sandbox free`))
    } finally {
      await faulty.close()
    }
  })
}

test('an execution path that throws is SandboxError, not a crash', async () => {
  const faulty = Fastify()
  try {
    await faulty.register(sandboxFusionCompat, {
      execute: async () => {
        throw new Error('runner unreachable')
      }
    })
    const res = await faulty.inject({
      method: 'POST',
      url: '/run_code',
      payload: { code: 'print(1)', language: 'python' }
    })
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().status, 'SandboxError')
    assert.match(res.json().message, /runner unreachable/)
  } finally {
    await faulty.close()
  }
})

test('a request the fleet refuses for a configured limit is a 422 naming the SandboxFusion field', async () => {
  const faulty = Fastify()
  try {
    await faulty.register(sandboxFusionCompat, {
      execute: fleetFault('invalid_request', 'timeout_ms must be at most 60000')
    })
    const res = await faulty.inject({
      method: 'POST',
      url: '/run_code',
      payload: { code: 'x', language: 'python', run_timeout: 600 }
    })
    assert.equal(res.statusCode, 422)
    assert.deepEqual(res.json().detail[0].loc, ['body', 'run_timeout'])
  } finally {
    await faulty.close()
  }
})

test('memory and killed map to Failed/Finished with a return code; truncation is reported in stderr', async () => {
  const results: ExecResult[] = [
    { ...failedResult('memory', '', ''), error: { type: 'MemoryError', message: '' }, stderr: 'MemoryError\n' },
    { ...failedResult('killed', '', ''), error: { type: 'killed', message: 'signal 11' } },
    {
      ...failedResult('ok', '', ''),
      error: null,
      exit_code: 0,
      stdout: 'x'.repeat(10),
      truncated: { stdout: true, stderr: false }
    }
  ]
  const one = Fastify()
  try {
    await one.register(sandboxFusionCompat, { execute: async () => results.shift() as ExecResult })
    const call = async (): Promise<any> =>
      (await one.inject({ method: 'POST', url: '/run_code', payload: { code: 'x', language: 'python' } })).json()
    const mem = await call()
    assert.deepEqual([mem.status, mem.run_result.status, mem.run_result.return_code], ['Failed', 'Finished', -9])
    const killed = await call()
    assert.deepEqual(
      [killed.status, killed.run_result.status, killed.run_result.return_code],
      ['Failed', 'Finished', -9]
    )
    const cut = await call()
    assert.equal(cut.status, 'Success')
    assert.match(cut.run_result.stderr, /stdout truncated/)
  } finally {
    await one.close()
  }
})

test('/run_jupyter runs its cells in one session, in order, and closes it', async () => {
  log.length = 0
  const { body } = await post('/run_jupyter', { cells: ['x = 40', 'x + 2', 'print(x * 2)'] })
  assert.equal(body.status, 'Success')
  const id = log[1]?.split(':')[0] ?? ''
  assert.deepEqual(log, ['create', `${id}:x = 40`, `${id}:x + 2`, `${id}:print(x * 2)`, `close:${id}`])
})

test('a cell timeout fails the run with TimeLimitExceeded but the next cells still run in the same state', async () => {
  const { body } = await post('/run_jupyter', { cells: ['y = 1', 'while True: pass', 'print(y)'], cell_timeout: 1 })
  assert.equal(body.status, 'Failed')
  assert.equal(body.driver.status, 'TimeLimitExceeded')
  assert.equal(body.cells[1].error[0].ename, 'TimeoutError')
  assert.equal(body.cells[2].stdout, '1\n')
})

test('a fleet fault inside a jupyter run is SandboxError and the session is still closed', async () => {
  log.length = 0
  const { body } = await post('/run_jupyter', { cells: ['x = 40', 'boom', 'print(x * 2)'] })
  assert.equal(body.status, 'SandboxError')
  assert.match(body.message, /sandbox died/)
  assert.match(log.at(-1) ?? '', /^close:/)
})

test("cell_timeout 0 (and absent: SandboxFusion's default) leaves each cell the run's total_timeout, not 1 ms", async () => {
  const one = Fastify()
  const timeouts: number[] = []
  const ok: ExecResult = { ...failedResult('ok', '', ''), error: null, exit_code: 0 }
  try {
    await one.register(sandboxFusionCompat, {
      execute: runPython,
      sessions: {
        create: async () => 's',
        execute: async (_id, cell) => {
          timeouts.push(cell.timeout_ms)
          return ok
        },
        close: async () => {}
      }
    })
    for (const payload of [
      { cells: ['x = 1'], cell_timeout: 0, total_timeout: 20 },
      { cells: ['x = 1'], total_timeout: 20 },
      { cells: ['x = 1'], cell_timeout: 0 }
    ]) {
      timeouts.length = 0
      const body = (await one.inject({ method: 'POST', url: '/run_jupyter', payload })).json()
      assert.equal(body.status, 'Success', JSON.stringify(payload))
      const total = payload.total_timeout ?? 45
      assert.ok(
        timeouts[0] !== undefined && timeouts[0] > (total - 1) * 1000 && timeouts[0] <= total * 1000,
        `${JSON.stringify(payload)}: ${timeouts[0]} ms`
      )
    }
  } finally {
    await one.close()
  }
})

test("a file outside the sandbox's writable places is a 422 naming the field; absolute paths in them (SandboxFusion's test writes /mnt/b) run", async () => {
  const cases: Array<[string, object, string]> = [
    ['/run_code', { code: 'print(1)', language: 'python', files: { '/etc/x': 'eA==' } }, '/etc/x'],
    ['/run_code', { code: 'print(1)', language: 'python', files: { 'a/../../etc/x': 'eA==' } }, 'a/../../etc/x'],
    ['/run_jupyter', { cells: ['1'], files: { '/usr/x': 'eA==' } }, '/usr/x']
  ]
  for (const [url, payload, path] of cases) {
    const { statusCode, body } = await post(url, payload)
    assert.equal(statusCode, 422, `${url} ${JSON.stringify(payload)}`)
    assert.deepEqual(
      [body.detail[0].type, body.detail[0].loc, body.detail[0].input],
      ['value_error', ['body', 'files'], path]
    )
    assert.match(body.detail[0].msg, /outside the sandbox's writable places/)
  }
  for (const payload of [
    { code: 'print(1)', language: 'python', files: { '/mnt/in.txt': 'eA==', '/tmp/a/b': 'eA==', 'c/../d': 'eA==' } },
    { code: 'print(1)', language: 'python', fetch_files: ['ok.txt', '/mnt/b', '../up', '/etc/passwd'] }
  ]) {
    const { statusCode, body } = await post('/run_code', payload)
    assert.deepEqual([statusCode, body.status], [200, 'Success'], JSON.stringify(payload))
  }
  const nested = await post('/run_code', {
    code: 'print(open("data/in.txt").read())',
    language: 'python',
    files: { 'data/in.txt': 'aGk=' }
  })
  assert.equal(nested.body.run_result.stdout, 'hi\n')
})
