import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { resolveExecRequest } from '@sandfleet/protocol'
import { ExecutorChannel } from '../../../src/kits/executor/executor-channel.ts'
import type { JudgeCompiled, JudgeTested, JudgeWork } from '../../../src/sandbox/contract.ts'

const run = { exit_code: 0, stdout: '', stderr: '', duration_ms: 1, truncated: { stdout: false, stderr: false } }

test("the channel's judge: its frame out, each step to the sink and the deadline, an ack or the stop back", async () => {
  const fromExecutor = new PassThrough()
  const toExecutor = new PassThrough()
  const channel = new ExecutorChannel(fromExecutor, toExecutor)
  const sent: Array<Record<string, unknown>> = []
  toExecutor.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line !== '') sent.push(JSON.parse(line))
  })
  fromExecutor.write(JSON.stringify({ op: 'ready', protocol: 1, pid: 1, python: '3', tiers: {}, packages: {} }) + '\n')
  await channel.ready(1000)
  const compiled: JudgeCompiled[] = []
  const tested: JudgeTested[] = []
  let begun = 0
  const work: JudgeWork = {
    program: { runtime: 'binary', source: 'main.cpp', code: 'int main(){}', compile: ['g++'], output: 'main' },
    tests: [{ stdin: '1' }, { stdin: '2' }, { stdin: '3', call: ['f', '[]'] }],
    timeoutMs: 1000,
    memoryMb: 64,
    compileTimeoutMs: 5000,
    compileMemoryMb: 2048,
    checkerTimeoutMs: 5000,
    maxOutputBytes: 1024,
    stopOnFailure: true,
    ackWindow: 2,
    sink: {
      begin: () => begun++,
      compiled: (c) => compiled.push(c),
      tested: (t) => {
        tested.push(t)
        return t.stdout !== 'ok'
      }
    }
  }
  let progressed = 0
  const outcome = channel.run(
    { request: resolveExecRequest({ code: '' }), maxOutputBytes: 1024, judge: work },
    { waiting: () => {}, progressed: () => progressed++ }
  )
  await new Promise((resolve) => setImmediate(resolve))
  const frame = sent[0]
  assert.equal(frame.op, 'judge')
  assert.equal(begun, 1)
  assert.deepEqual(frame.tests, [
    { stdin: '1', call: null },
    { stdin: '2', call: null },
    { stdin: '3', call: ['f', '[]'] }
  ])
  assert.deepEqual([frame.checker, frame.answers, frame.tenant, frame.wait_ms], [null, null, null, null])
  assert.equal(frame.ack_window, 2)
  assert.equal((frame.program as { binary: unknown }).binary, null)
  const id = frame.id
  const say = (f: object): void => {
    fromExecutor.write(JSON.stringify({ id, ...f }) + '\n')
  }
  say({ op: 'compiled', step: 'program', status: 'ok', ...run, binary: Buffer.from('ELF').toString('base64') })
  say({ op: 'tested', index: 0, status: 'ok', ...run, stdout: 'ok' })
  say({ op: 'tested', index: 1, status: 'bogus', ...run, stdout: 'no', returned: '[1]' })
  say({ op: 'tested', id: 'another job', index: 2, status: 'ok', ...run })
  say({ op: 'result', status: 'ok', ...run, error: null, files: {}, retire: false })
  const end = await outcome
  assert.equal(end.status, 'ok')
  assert.deepEqual(compiled[0].binary, Buffer.from('ELF'))
  assert.deepEqual(
    tested.map((t) => [t.index, t.status, t.returned]),
    [
      [0, 'ok', undefined],
      [1, 'killed', '[1]']
    ],
    "a status outside the protocol is killed; a frame of another job is not this judge's"
  )
  assert.equal(progressed, 3, 'each step moves the deadline')
  assert.deepEqual(
    sent.slice(1).map((f) => [f.op, f.index]),
    [
      ['judge_ack', 0],
      ['judge_stop', undefined]
    ]
  )
})
