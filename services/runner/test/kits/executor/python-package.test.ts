/**
 * The sandbox's Python package (sandbox-images/python/sandfleet_sandbox/) from `npm test`: its pytest
 * suite, which also fails while executor.py or session_host.py is not what build.py makes of the
 * package; and the exec and judge frames, the twins of the executor's parse (runner_channel.parse_frame).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { resolveExecRequest } from '@sandfleet/protocol'
import { ExecutorChannel } from '../../../src/kits/executor/executor-channel.ts'
import { PYTHON_IMAGE_DIR } from '../../../src/kits/executor/python-image.ts'
import type { JudgeWork } from '../../../src/sandbox/contract.ts'

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
      'import json, sys\nfrom sandfleet_sandbox.runner_channel import parse_frame\n' +
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

test("the judge frames the runner's channel writes parse as the executor's frozen JudgeJob, JudgeAck and JudgeStop", async () => {
  const written: string[] = []
  const fromExecutor = new PassThrough()
  const toExecutor = new PassThrough()
  toExecutor.on('data', (chunk: Buffer) =>
    written.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== '')
    )
  )
  const channel = new ExecutorChannel(fromExecutor, toExecutor)
  fromExecutor.write(JSON.stringify({ op: 'ready', protocol: 1, pid: 1, python: '3', tiers: {}, packages: {} }) + '\n')
  await channel.ready(1000)
  const checker = { runtime: 'python' as const, source: 'checker.py', code: 'import sys' }
  const work: JudgeWork = {
    program: {
      runtime: 'binary',
      source: 'main.cpp',
      code: 'int main(){}',
      compile: ['g++', '-o', 'main', 'main.cpp'],
      output: 'main',
      run: ['./main'],
      binary: Buffer.from('ELF')
    },
    checker,
    answers: ['1\n', '2\n'],
    tests: [{ stdin: '1' }, { stdin: '2' }],
    timeoutMs: 1000,
    memoryMb: 64,
    compileTimeoutMs: 5000,
    compileMemoryMb: 2048,
    checkerTimeoutMs: 3000,
    maxOutputBytes: 1024,
    stopOnFailure: true,
    ackWindow: 2,
    sink: { begin: () => {}, compiled: () => {}, tested: (t) => t.index > 0 }
  }
  const outcome = channel.run({
    request: resolveExecRequest({ code: '', isolation: 'reuse' }),
    maxOutputBytes: 1024,
    startBy: performance.now() + 5000,
    tenant: 'acme',
    judge: work
  })
  await new Promise((resolve) => setImmediate(resolve))
  const id = (JSON.parse(written[0]) as { id: string }).id
  const run = {
    status: 'ok',
    exit_code: 0,
    stdout: '',
    stderr: '',
    duration_ms: 1,
    truncated: { stdout: false, stderr: false }
  }
  for (const index of [0, 1]) fromExecutor.write(JSON.stringify({ op: 'tested', id, index, ...run }) + '\n')
  fromExecutor.write(JSON.stringify({ op: 'result', id, ...run, error: null, files: {}, retire: false }) + '\n')
  assert.equal((await outcome).status, 'ok')
  assert.deepEqual(
    written.map((l) => (JSON.parse(l) as { op: string }).op),
    ['judge', 'judge_ack', 'judge_stop']
  )
  const parse = spawnSync(
    PYTHON,
    [
      '-c',
      'import base64, json, sys\nfrom sandfleet_sandbox.runner_channel import parse_frame\n' +
        'def plain(v):\n' +
        '    if isinstance(v, bytes): return base64.b64encode(v).decode()\n' +
        '    if hasattr(v, "_asdict"): return {k: plain(x) for k, x in v._asdict().items()}\n' +
        '    if isinstance(v, tuple): return [plain(x) for x in v]\n' +
        '    return v\n' +
        'for line in sys.stdin:\n' +
        '    job = parse_frame(json.loads(line))\n' +
        '    print(json.dumps([type(job).__name__, plain(job)]))'
    ],
    { cwd: PYTHON_IMAGE_DIR, input: written.join('\n') + '\n', encoding: 'utf8' }
  )
  assert.equal(parse.status, 0, parse.stderr)
  const parsed = parse.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as [string, Record<string, unknown>])
  assert.deepEqual(
    parsed.map(([type]) => type),
    ['JudgeJob', 'JudgeAck', 'JudgeStop']
  )
  const { op, ...sent } = JSON.parse(written[0]) as Record<string, unknown>
  assert.equal(op, 'judge')
  const tests = sent.tests as Array<{ stdin: string; call: unknown }>
  assert.deepEqual(
    parsed[0][1],
    { ...sent, tests: tests.map((t) => ({ stdin: t.stdin, call: t.call })) },
    'every field the runner sends is a field of the JudgeJob, as sent'
  )
  assert.deepEqual(
    [sent.isolation, sent.tenant, sent.checker_timeout_ms, sent.answers],
    ['reuse', 'acme', 3000, ['1\n', '2\n']]
  )
  assert.ok(typeof sent.wait_ms === 'number' && sent.wait_ms > 0 && sent.wait_ms <= 5000)
  assert.deepEqual(parsed[1][1], { id, index: 0 })
  assert.deepEqual(parsed[2][1], { id })
})
