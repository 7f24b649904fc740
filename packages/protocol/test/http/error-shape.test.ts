import { test } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import {
  FASTIFY_FAULTS,
  JsonTooDeepError,
  RegisteredError,
  edgeError,
  faultOf,
  frameworkErrorHandler,
  installErrorShape,
  installJsonBody,
  type EdgeOptions,
  type ErrorRegistry,
  type ErrorSpec
} from '../../src/http/index.ts'

/** A refusal of the caller's: 4xx, `invalid_request`. */
const refusal = (statusCode: number): ErrorSpec => ({
  statusCode,
  status: 'invalid_request',
  message: `refused with ${statusCode}`
})
const ERRORS = {
  SF_ERR_T_INVALID: refusal(400),
  SF_ERR_T_JSON: refusal(400),
  SF_ERR_T_BIG: refusal(413),
  SF_ERR_T_MEDIA: refusal(415),
  SF_ERR_T_NOT_FOUND: refusal(404),
  SF_ERR_T_METHOD: refusal(405),
  SF_ERR_T_INTERNAL: { statusCode: 500, status: 'infra_error', message: 'Bug' },
  SF_ERR_T_FULL: { statusCode: 429, status: 'overloaded', message: 'Full' }
} satisfies ErrorRegistry
type Code = keyof typeof ERRORS

const EDGE: EdgeOptions<Code> = {
  registry: ERRORS,
  codes: {
    invalidRequest: 'SF_ERR_T_INVALID',
    invalidJson: 'SF_ERR_T_JSON',
    bodyTooLarge: 'SF_ERR_T_BIG',
    unsupportedMedia: 'SF_ERR_T_MEDIA',
    notFound: 'SF_ERR_T_NOT_FOUND',
    methodNotAllowed: 'SF_ERR_T_METHOD',
    internal: 'SF_ERR_T_INTERNAL'
  },
  service: 'test',
  maxBodyBytes: 256
}

/** A server with the edge and a few routes; `answered` collects the codes it answered. */
async function server(answered: string[]): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: EDGE.maxBodyBytes,
    frameworkErrors: frameworkErrorHandler(EDGE),
    ajv: { customOptions: { removeAdditional: false } }
  })
  installJsonBody(app, 4)
  installErrorShape(app, {
    ...EDGE,
    onAnswer: (code) => {
      answered.push(code)
    }
  })
  app.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          properties: { n: { type: 'integer' }, lang: { enum: ['a', 'b'] } },
          required: ['n'],
          additionalProperties: false
        }
      }
    },
    async (request) => request.body
  )
  app.get('/full', async () => {
    throw new RegisteredError(ERRORS, 'SF_ERR_T_FULL', 'the queue is full')
  })
  app.get('/bug', async () => {
    throw new TypeError('x is undefined')
  })
  app.get('/item/:id', async () => 'ok')
  await app.ready()
  return app
}

test("the edge answers each fault with the service's code, by the error's code", async () => {
  const answered: string[] = []
  const app = await server(answered)
  try {
    const post = async (payload: string, type = 'application/json') =>
      await app.inject({ method: 'POST', url: '/echo', payload, headers: { 'content-type': type } })
    const cases: Array<[Awaited<ReturnType<typeof post>>, number, string, string | undefined]> = [
      [await post('{"n":'), 400, 'SF_ERR_T_JSON', undefined],
      [await post(''), 400, 'SF_ERR_T_JSON', undefined],
      [await post('{"n": 1, "__proto__": {"x": 1}}'), 400, 'SF_ERR_T_JSON', undefined],
      [await post('{"n": [[[[[]]]]]}'), 400, 'SF_ERR_T_JSON', undefined],
      [await post(JSON.stringify({ n: 'x'.repeat(300) })), 413, 'SF_ERR_T_BIG', undefined],
      [await post('n=1', 'application/x-www-form-urlencoded'), 415, 'SF_ERR_T_MEDIA', undefined],
      [await post('{}'), 400, 'SF_ERR_T_INVALID', 'n'],
      [await post('{"n": 1, "extra": 2}'), 400, 'SF_ERR_T_INVALID', 'extra'],
      [await post('{"n": 1.5}'), 400, 'SF_ERR_T_INVALID', 'n']
    ]
    for (const [res, statusCode, code, field] of cases) {
      assert.equal(res.statusCode, statusCode, res.body)
      assert.equal(res.json().status, 'invalid_request')
      assert.equal(res.json().error.code, code, res.body)
      assert.equal(res.json().error.field, field, res.body)
    }
    assert.match(cases[3][0].json().error.message, /nested deeper than 4 levels/)
    assert.equal(
      cases[4][0].json().error.message,
      "request body is larger than 256 bytes, this test's maxBodyBytes (--max-body-bytes)"
    )
    assert.equal(cases[7][0].json().error.message, 'extra is not a known field')
    assert.deepEqual(
      answered,
      cases.map((c) => c[2]),
      'each answer is told by its code'
    )
    const lang = await post('{"n": 1, "lang": "c"}')
    assert.deepEqual(lang.json().error, {
      code: 'SF_ERR_T_INVALID',
      message: 'lang must be one of "a", "b"',
      field: 'lang'
    })
    assert.deepEqual(
      (await post('{"n": [[[]]]}')).json().error.field,
      'n',
      'nested up to the limit: parsed, and judged by the schema'
    )
  } finally {
    await app.close()
  }
})

test('the edge keeps a registered error, hides an unexpected one, and answers 404, 405 and a bad URL in its shape', async () => {
  const app = await server([])
  try {
    const full = await app.inject({ url: '/full' })
    assert.deepEqual(
      [full.statusCode, full.json()],
      [429, { status: 'overloaded', error: { code: 'SF_ERR_T_FULL', message: 'the queue is full' } }]
    )
    const bug = await app.inject({ url: '/bug' })
    assert.deepEqual(
      [bug.statusCode, bug.json()],
      [500, { status: 'infra_error', error: { code: 'SF_ERR_T_INTERNAL', message: 'internal error' } }]
    )
    const method = await app.inject({ method: 'DELETE', url: '/echo' })
    assert.deepEqual(
      [method.statusCode, method.headers.allow, method.json().error.code],
      [405, 'POST', 'SF_ERR_T_METHOD']
    )
    const missing = await app.inject({ url: '/nope' })
    assert.deepEqual([missing.statusCode, missing.json().error.message], [404, 'no route GET /nope'])
    const url = await app.inject({ url: '/item/%zz' })
    assert.deepEqual([url.statusCode, url.json().error.code, url.json().error.field], [400, 'SF_ERR_T_INVALID', 'url'])
  } finally {
    await app.close()
  }
})

test('a refusal the service passes through is answered as it is', async () => {
  const app = Fastify()
  const body = { status: 'infra_error' as const, error: { code: 'SF_ERR_T_FULL', message: 'gone' } }
  installErrorShape(app, {
    ...EDGE,
    passThrough: (err) => (err instanceof RangeError ? { statusCode: 410, body } : undefined)
  })
  app.get('/gone', async () => {
    throw new RangeError('x')
  })
  try {
    const res = await app.inject({ url: '/gone' })
    assert.deepEqual([res.statusCode, res.json()], [410, body])
  } finally {
    await app.close()
  }
})

test('faultOf reads the code, never the message', () => {
  for (const [code, fault] of Object.entries(FASTIFY_FAULTS))
    assert.equal(faultOf({ code, message: 'whatever' }), fault)
  assert.equal(faultOf(new JsonTooDeepError(3)), 'invalidJson')
  assert.equal(
    faultOf(Object.assign(new Error('Unexpected token in JSON'), { statusCode: 400 })),
    'invalidRequest',
    'a message that speaks of JSON is not a JSON fault'
  )
  assert.equal(faultOf(new SyntaxError('Unexpected token in JSON')), 'internal')
  assert.equal(faultOf(undefined), 'internal')
  const mapped = edgeError(
    Object.assign(new Error('size mismatch'), { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH', statusCode: 400 }),
    EDGE
  )
  assert.deepEqual(mapped.toBody(), {
    status: 'invalid_request',
    error: { code: 'SF_ERR_T_INVALID', message: 'size mismatch' }
  })
})
