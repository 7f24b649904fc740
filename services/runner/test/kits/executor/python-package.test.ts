/**
 * The sandbox's Python package (sandbox-images/python/sandfleet_sandbox/) from `npm test`: its pytest
 * suite, which also fails while executor.py or session_host.py is not what build.py makes of the
 * package; and the exec frame, the twin of the executor's parse (frames.py).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { resolveExecRequest } from '@sandfleet/protocol'
import { ExecutorChannel } from '../../../src/kits/executor/executor-channel.ts'
import { PYTHON_IMAGE_DIR } from '../../../src/kits/executor/python-image.ts'

// Debian's interpreter, which has python3-pytest (not a version manager's shim).
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'

test('the sandbox package passes its pytest suite, and the built programs are up to date', () => {
  const run = spawnSync(PYTHON, ['-m', 'pytest', 'test', '-q', '-p', 'no:cacheprovider'], {
    cwd: PYTHON_IMAGE_DIR,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }
  })
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`)
  assert.match(run.stdout, /\d+ passed/)
  assert.doesNotMatch(run.stdout, /skipped|xfail/)
})

test("the exec frames the runner's channel writes parse as the executor's frozen ExecJob, every field present", async () => {
  const written: string[] = []
  const toExecutor = new PassThrough()
  toExecutor.on('data', (chunk: Buffer) =>
    written.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== '')
    )
  )
  const channel = new ExecutorChannel(new PassThrough(), toExecutor)
  const request = resolveExecRequest({ code: 'print(1)' })
  void channel.run({ request, maxOutputBytes: 4096 })
  channel.close()
  const channel2 = new ExecutorChannel(new PassThrough(), toExecutor)
  void channel2.run({
    request: resolveExecRequest({ code: 'x', stdin: 'in', files: { 'a.txt': 'eA==' }, fetch_files: ['b'] }),
    maxOutputBytes: 1,
    startBy: performance.now() + 5000,
    tenant: 'acme'
  })
  channel2.close()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(written.length, 2)
  const parse = spawnSync(
    PYTHON,
    [
      '-c',
      'import json, sys\nfrom sandfleet_sandbox.frames import parse_frame\n' +
        'for line in sys.stdin: print(json.dumps(parse_frame(json.loads(line))._asdict(), default=dict))'
    ],
    { cwd: PYTHON_IMAGE_DIR, input: written.join('\n') + '\n', encoding: 'utf8' }
  )
  assert.equal(parse.status, 0, parse.stderr)
  const [plain, full] = parse.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
  const { op, ...sent } = JSON.parse(written[0]) as Record<string, unknown>
  assert.equal(op, 'exec')
  assert.deepEqual(plain, sent, 'every field the runner sends is a field of the ExecJob, as sent')
  assert.equal(plain.timeout_ms, request.timeout_ms)
  assert.equal(plain.memory_mb, request.memory_mb)
  assert.equal(plain.wait_ms, null)
  assert.equal(plain.tenant, null)
  assert.equal(full.tenant, 'acme')
  assert.ok(typeof full.wait_ms === 'number' && full.wait_ms > 0 && full.wait_ms <= 5000)
  assert.deepEqual(
    [full.stdin, full.files, full.fetch_files, full.max_output_bytes],
    ['in', { 'a.txt': 'eA==' }, ['b'], 1]
  )
})
