import { test } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyReply } from 'fastify'
import type { SandboxRun, SandboxRunEvent } from '@sandfleet/protocol'
import { ExecutionAnswer } from '../../../src/apis/e2b/e2b-execution.ts'

/** A run's result as a runner answers one. */
function runOf(status: SandboxRun['result']['status'], stdout = '', error: SandboxRun['result']['error'] = null) {
  return {
    result: {
      status,
      stdout,
      stderr: '',
      exit_code: status === 'ok' ? 0 : 1,
      duration_ms: 1,
      queue_ms: 0,
      truncated: { stdout: false, stderr: false },
      error,
      files: {},
      runner: 'r',
      sandbox: 's'
    },
    results: [{ data: { 'text/plain': '42' }, main: true }],
    execution_count: 3
  } satisfies SandboxRun
}

/** A server whose one route answers as `play` feeds its ExecutionAnswer. */
async function serve(play: (answer: ExecutionAnswer, reply: FastifyReply) => Promise<FastifyReply>) {
  const app = Fastify()
  app.post('/execute', async (_request, reply) => await play(new ExecutionAnswer(reply), reply))
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return { app, url: `http://127.0.0.1:${port}/execute` }
}

const plainOf = (reply: FastifyReply) => (code: number, text: string) =>
  reply.code(code).type('text/plain; charset=utf-8').send(text)

const linesOf = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)

test("a run's output goes out while it runs; its results, error and end when it ends", async () => {
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const { app, url } = await serve(async (answer, reply) => {
    answer.event({ event: 'running', execution_count: 3 })
    answer.event({ event: 'output', stream: 'stdout', text: 'a\n' })
    await released // the run goes on only once the client saw its first line
    answer.event({ event: 'output', stream: 'stderr', text: 'b\n' })
    return await answer.ended(
      runOf('error', 'a\n', { type: 'ValueError', message: 'v', traceback: 'tb' }),
      plainOf(reply)
    )
  })
  try {
    const res = await fetch(url, { method: 'POST' })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson')
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (!text.includes('"stdout"')) {
      const { value, done } = await reader.read()
      assert.ok(!done, 'the first line came before the end')
      text += decoder.decode(value, { stream: true })
    }
    assert.doesNotMatch(text, /end_of_execution/)
    release()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    assert.deepEqual(
      linesOf(text).map((l) => l.type),
      ['number_of_executions', 'stdout', 'stderr', 'result', 'error', 'end_of_execution']
    )
    const lines = linesOf(text)
    assert.equal(lines[0]?.execution_count, 3)
    assert.equal(lines[1]?.text, 'a\n')
    assert.deepEqual(lines[4], { type: 'error', name: 'ValueError', value: 'v', traceback: 'tb' })
  } finally {
    release()
    await app.close()
  }
})

test('a run that ends before its output was written is one answer, its output from its events alone', async () => {
  let startedBeforeEnd: boolean | undefined
  const { app, url } = await serve(async (answer, reply) => {
    const events: SandboxRunEvent[] = [{ event: 'running', execution_count: 3 }]
    for (let i = 0; i < 100; i++) events.push({ event: 'output', stream: 'stdout', text: `${i}\n` })
    for (const event of events) answer.event(event)
    startedBeforeEnd = answer.started
    return await answer.ended(runOf('ok', 'not sent again'), plainOf(reply))
  })
  try {
    const res = await fetch(url, { method: 'POST' })
    assert.equal(res.status, 200)
    assert.equal(startedBeforeEnd, false, 'nothing went before the end')
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/)
    const lines = linesOf(await res.text())
    const out = lines.filter((l) => l.type === 'stdout').map((l) => l.text)
    assert.equal(out.length, 100)
    assert.equal(out.join(''), Array.from({ length: 100 }, (_, i) => `${i}\n`).join(''))
    assert.deepEqual(lines.at(-1), { type: 'end_of_execution' })
  } finally {
    await app.close()
  }
})

test('a fleet status while nothing was written is the 503 (retriable); after output, an error line', async () => {
  const { app, url } = await serve(async (answer, reply) => {
    answer.event({ event: 'running', execution_count: 1 })
    return await answer.ended(
      runOf('infra_error', '', { type: 'SF_ERR_SESSION_LOST', message: 'lost' }),
      plainOf(reply)
    )
  })
  try {
    const res = await fetch(url, { method: 'POST' })
    assert.equal(res.status, 503)
    assert.match(await res.text(), /infra_error: lost/)
  } finally {
    await app.close()
  }
  const late = await serve(async (answer) => {
    answer.event({ event: 'running', execution_count: 1 })
    answer.event({ event: 'output', stream: 'stdout', text: 'partial\n' })
    await new Promise((resolve) => setTimeout(resolve, 200)) // past the flush: the answer has started
    assert.equal(answer.started, true)
    return answer.failed('the sandbox is gone')
  })
  try {
    const res = await fetch(late.url, { method: 'POST' })
    assert.equal(res.status, 200)
    const lines = linesOf(await res.text())
    assert.deepEqual(
      lines.map((l) => l.type),
      ['number_of_executions', 'stdout', 'error']
    )
    assert.equal(lines[2]?.value, 'the sandbox is gone')
  } finally {
    await late.app.close()
  }
})

test('64 KiB of output waiting go out at once, without waiting for the flush', async () => {
  const { app, url } = await serve(async (answer, reply) => {
    answer.event({ event: 'running', execution_count: 1 })
    answer.event({ event: 'output', stream: 'stdout', text: 'x'.repeat(70_000) })
    assert.equal(answer.started, true, 'written in the same turn')
    return await answer.ended(runOf('ok'), plainOf(reply))
  })
  try {
    const lines = linesOf(await (await fetch(url, { method: 'POST' })).text())
    assert.deepEqual(
      lines.map((l) => l.type),
      ['number_of_executions', 'stdout', 'result', 'end_of_execution']
    )
  } finally {
    await app.close()
  }
})
