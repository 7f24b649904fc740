/**
 * Piston's `c++` and `c` (its gcc runtime's languages, by their aliases too), with a judge that really compiles (the
 * tests' local judge: g++ and gcc on this machine): Piston's `compile` stage beside `run`, `run` repeating the compile
 * stage when it failed, a runtime error's status RE, a run past run_timeout TO; /runtimes listing them with the
 * compilers' versions when the fleet judges them; a fleet that judges neither: the 400 of an unknown runtime.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { installCallContext } from '../../../src/pipeline/call-context.ts'
import { QUEUE_TIMEOUT_MS, type JudgeRequest } from '@sandfleet/protocol'
import { pistonCompat, type PistonOptions } from '../../../src/apis/piston/piston.ts'
import { runPython } from '../helpers.ts'
import { localJudge } from '../../helpers/local-judge.ts'

const judged: JudgeRequest[] = []
const withCompilers: PistonOptions['runtimes'] = async () => [
  { language: 'python', version: '3.11.2' },
  { language: 'c++', version: '12.2.0' },
  { language: 'c', version: '12.2.0' }
]

let app: FastifyInstance
before(async () => {
  app = Fastify()
  installCallContext(app, QUEUE_TIMEOUT_MS)
  await app.register(pistonCompat, {
    execute: runPython,
    judge: async (r) => {
      judged.push(r)
      return await localJudge(r)
    },
    runtimes: withCompilers
  })
})
after(async () => {
  await app.close()
})

async function execute(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await app.inject({ method: 'POST', url: '/api/v2/execute', payload: { version: '*', ...body } })
  return { status: res.statusCode, body: res.json() }
}

test('c++ compiles, then runs on its stdin: compile code 0, run as Piston answers, the version the fleet has', async () => {
  const res = await execute({
    language: 'c++',
    files: [
      { name: 'main.cpp', content: '#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}' }
    ],
    stdin: '40 2',
    run_timeout: 2000,
    compile_timeout: 20_000
  })
  assert.equal(res.status, 200)
  assert.deepEqual([res.body.language, res.body.version], ['c++', '12.2.0'])
  assert.deepEqual([res.body.compile.code, res.body.compile.status, res.body.compile.signal], [0, null, null])
  assert.deepEqual(
    [res.body.run.stdout, res.body.run.code, res.body.run.status, res.body.run.output],
    ['42\n', 0, null, '42\n']
  )
  const sent = judged.at(-1) as JudgeRequest
  assert.deepEqual([sent.language, sent.timeout_ms, sent.compile_timeout_ms], ['cpp', 2000, 20_000])
})

test('the aliases cpp, g++ and gcc name the same languages, and c is compiled by gcc', async () => {
  for (const language of ['cpp', 'g++']) {
    const res = await execute({ language, files: [{ content: '#include <cstdio>\nint main(){puts("hi");}' }] })
    assert.deepEqual([res.status, res.body.language, res.body.run.stdout], [200, 'c++', 'hi\n'], language)
  }
  for (const language of ['c', 'gcc']) {
    const res = await execute({
      language,
      files: [
        { content: '#include <stdio.h>\n#include <math.h>\nint main(void){printf("%.0f\\n", sqrt(49.0));return 0;}' }
      ]
    })
    assert.deepEqual([res.status, res.body.language, res.body.run.stdout], [200, 'c', '7\n'], language)
    assert.equal(judged.at(-1)?.language, 'c')
  }
})

test("a compile error: compile status RE with the compiler's messages, and run repeating the compile stage", async () => {
  const res = await execute({ language: 'c++', files: [{ content: 'int main() { object i = ?; return 0; }' }] })
  assert.equal(res.status, 200)
  assert.equal(res.body.compile.status, 'RE')
  assert.notEqual(res.body.compile.code, 0)
  assert.match(res.body.compile.stderr, /error: .object. was not declared/)
  assert.deepEqual(res.body.run, res.body.compile)
})

test('a runtime error is status RE with its code; an abort its signal; a run past run_timeout TO with SIGKILL', async () => {
  const exit = await execute({ language: 'c', files: [{ content: 'int main(void){return 3;}' }] })
  assert.deepEqual([exit.body.run.code, exit.body.run.status], [3, 'RE'])
  const abort = await execute({
    language: 'c++',
    files: [{ content: '#include <cassert>\nint main(){ assert(1 == 2); return 0; }' }]
  })
  assert.equal(abort.body.run.status, 'RE')
  assert.match(abort.body.run.stderr, /Assertion `1 == 2' failed/)
  const slow = await execute({ language: 'c++', files: [{ content: 'int main(){ for(;;); }' }], run_timeout: 500 })
  assert.deepEqual([slow.body.run.status, slow.body.run.signal, slow.body.run.code], ['TO', 'SIGKILL', null])
})

test('a compiled program is one file and takes no args: a 400 naming the field, nothing run', async () => {
  judged.length = 0
  const args = await execute({ language: 'c++', files: [{ content: 'int main(){}' }], args: ['x'] })
  assert.equal(args.status, 400)
  assert.match(args.body.message, /^args: /)
  const files = await execute({ language: 'c', files: [{ content: 'int main(){}' }, { name: 'x.h', content: '' }] })
  assert.equal(files.status, 400)
  assert.match(files.body.message, /^files: /)
  assert.equal(judged.length, 0)
})

test('/runtimes lists c++ and c with their aliases and the gcc runtime; a fleet that judges neither refuses them', async () => {
  const runtimes = (await app.inject({ method: 'GET', url: '/api/v2/runtimes' })).json()
  assert.deepEqual(
    runtimes.filter((r: any) => r.runtime === 'gcc'),
    [
      { language: 'c++', version: '12.2.0', aliases: ['cpp', 'g++'], runtime: 'gcc' },
      { language: 'c', version: '12.2.0', aliases: ['gcc'], runtime: 'gcc' }
    ]
  )
  const none = Fastify()
  installCallContext(none, QUEUE_TIMEOUT_MS)
  try {
    await none.register(pistonCompat, {
      execute: runPython,
      judge: localJudge,
      runtimes: async () => [{ language: 'python', version: '3.11.2' }]
    })
    const res = await none.inject({
      method: 'POST',
      url: '/api/v2/execute',
      payload: { language: 'c++', version: '*', files: [{ content: 'int main(){}' }] }
    })
    assert.equal(res.statusCode, 400)
    assert.match(res.json().message, /^language "c\+\+": c\+\+-\* runtime is unknown/)
  } finally {
    await none.close()
  }
})
