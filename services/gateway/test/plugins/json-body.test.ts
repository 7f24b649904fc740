import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { LIMITS } from '@sandfleet/protocol'
import { echoRunner } from '../helpers/fake-runner.ts'

const COMPAT = [
  '/run_code',
  '/run_jupyter',
  '/run',
  '/run/batch',
  '/run/long-batch',
  '/judge',
  '/judge/batch',
  '/judge/long-batch'
]
const NATIVE = ['/v1/execute', '/v1/execute/batch', '/v1/sessions', '/mcp']

const nestedList = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)
const nestedObject = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1)
const bodies = (depth: number): string[] => [
  `{"code": ${nestedList(depth)}}`,
  `{"submissions": [{"solution": ${nestedObject(depth)}}]}`,
  `{"cells": [${nestedList(depth)}]}`,
  nestedList(depth)
]

let app: FastifyInstance
before(async () => {
  ;({ app } = await buildGatewayApp({ config: loadGatewayConfig({ env: {} }), clients: [echoRunner()], logger: false }))
  await app.ready()
})
after(async () => {
  await app.close()
})

test('deeply nested JSON on the compat routes is a 422 json_invalid, never a 500', async () => {
  for (const url of COMPAT) {
    for (const depth of [LIMITS.maxJsonDepth + 1, 300, 5000]) {
      for (const payload of bodies(depth)) {
        const r = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
        assert.equal(r.statusCode, 422, `${url} at depth ${depth}: ${r.body.slice(0, 200)}`)
        const detail = r.json().detail
        assert.equal(detail[0].type, 'json_invalid', url)
        assert.match(detail[0].ctx.error, /nested deeper than/)
      }
    }
  }
})

test('deeply nested JSON on the native routes is a 400 SF_ERR_GATEWAY_INVALID_JSON', async () => {
  for (const url of NATIVE) {
    for (const depth of [LIMITS.maxJsonDepth + 1, 5000]) {
      for (const payload of bodies(depth)) {
        const r = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
        assert.equal(r.statusCode, 400, `${url} at depth ${depth}: ${r.body.slice(0, 200)}`)
        assert.equal(r.json().status, 'invalid_request')
        assert.equal(r.json().error.code, 'SF_ERR_GATEWAY_INVALID_JSON')
      }
    }
  }
})

test('JSON nested up to the limit is parsed and judged by the route', async () => {
  const r = await app.inject({
    method: 'POST',
    url: '/run_code',
    payload: `{"code": ${nestedList(LIMITS.maxJsonDepth - 1)}}`,
    headers: { 'content-type': 'application/json' }
  })
  assert.equal(r.statusCode, 422)
  assert.equal(r.json().detail[0].type, 'string_type')
  const n = await app.inject({
    method: 'POST',
    url: '/v1/execute',
    payload: `{"code": ${nestedList(LIMITS.maxJsonDepth - 1)}}`,
    headers: { 'content-type': 'application/json' }
  })
  assert.equal(n.statusCode, 400)
  assert.equal(n.json().error.field, 'code')
  const ok = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'print(1)' } })
  assert.equal(ok.json().stdout, 'print(1)', 'the gateway serves after')
})

test('a JSON body that poisons __proto__ is still refused', async () => {
  const r = await app.inject({
    method: 'POST',
    url: '/run_code',
    payload: '{"code": "1", "__proto__": {"x": 1}}',
    headers: { 'content-type': 'application/json' }
  })
  assert.equal(r.statusCode, 422)
  assert.equal(r.json().detail[0].type, 'json_invalid')
})

test('a body that is not JSON is answered with where it stops being JSON; an unknown field with the known one it meant', async () => {
  const post = async (url: string, payload: string): Promise<{ code: string; message: string; field?: string }> => {
    const r = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } })
    assert.equal(r.statusCode, 400, r.body)
    return r.json().error
  }
  assert.deepEqual(await post('/v1/execute', '{"code": "print(1)",}'), {
    code: 'SF_ERR_GATEWAY_INVALID_JSON',
    message:
      'request body is not valid JSON: line 1, column 21: "}" where a property name in double quotes was expected'
  })
  assert.match(
    (await post('/v1/execute/batch', '{"requests": [\n  {"code": "x"}\n  {"code": "y"}\n]}')).message,
    /^request body is not valid JSON: line 3, column 3: "\{" where ',' or '\]' was expected$/
  )
  assert.deepEqual(await post('/v1/execute', '{"code": "x", "timeout": 5}'), {
    code: 'SF_ERR_GATEWAY_INVALID_REQUEST',
    message: 'timeout is not a known field (did you mean timeout_ms?)',
    field: 'timeout'
  })
  assert.equal(
    (await post('/v1/execute/batch', '{"requests": [{"code": "x", "langauge": "python"}]}')).message,
    'requests/0/langauge is not a known field (did you mean language?)'
  )
})
