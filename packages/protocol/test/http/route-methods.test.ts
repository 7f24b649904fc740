import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RouteMethods } from '@sandfleet/protocol/http'

test('RouteMethods: the methods of the patterns a path matches, sorted; none for a path no route has', () => {
  const methods = new RouteMethods()
  methods.add(['GET', 'HEAD'], '/v1/sessions/:id')
  methods.add('delete', '/v1/sessions/:id')
  methods.add('POST', '/v1/sessions/:id/execute')
  methods.add('GET', '/docs/*')
  methods.add('GET', '/a.b')
  assert.deepEqual(methods.allowed('/v1/sessions/s-1'), ['DELETE', 'GET', 'HEAD'])
  assert.deepEqual(methods.allowed('/v1/sessions/s-1/execute?x=1'), ['POST'], 'the query is not part of the path')
  assert.deepEqual(methods.allowed('/v1/sessions/s-1/other'), [], 'a parameter is one segment')
  assert.deepEqual(methods.allowed('/docs/static/x.js'), ['GET'])
  assert.deepEqual(methods.allowed('/aXb'), [], 'a dot in a pattern is a dot')
})
