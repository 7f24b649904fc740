/**
 * A retry goes back to the runner that had its call: every call has a request id (the caller's,
 * or one the gateway gives and returns), a gateway remembers where it sent each, and a caller
 * retrying through another gateway names that runner (x-sandfleet-runner).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { callContext } from '@sandfleet/protocol'
import { CallPlaces, identified } from '../../src/runners/call-places.ts'
import { echoRunner } from '../helpers/fake-runner.ts'

test('a call without a request_id is given one, returned in its result', async () => {
  assert.match(identified({ code: 'x' }).request_id ?? '', /^[0-9a-f-]{36}$/)
  assert.equal(identified({ code: 'x', request_id: 'mine' }).request_id, 'mine')
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [echoRunner('r1')],
    logger: false
  })
  try {
    const r = (await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'x' } })).json()
    assert.match(r.request_id, /^[0-9a-f-]{36}$/)
    const batch = (
      await app.inject({
        method: 'POST',
        url: '/v1/execute/batch',
        payload: { requests: [{ code: 'a' }, { code: 'b' }] }
      })
    ).json()
    const ids = batch.results.map((x: { request_id: string }) => x.request_id)
    assert.equal(new Set(ids).size, 2)
  } finally {
    await app.close()
  }
})

test("a retried request_id goes to the runner that had it while it is up: this gateway's memory, or the runner the caller names", async () => {
  const config = loadGatewayConfig({ env: {} })
  const one = await buildGatewayApp({ config, clients: [echoRunner('r1'), echoRunner('r2')], logger: false })
  const other = await buildGatewayApp({ config, clients: [echoRunner('r1'), echoRunner('r2')], logger: false })
  const call = async (app: typeof one.app, body: object, runner?: string): Promise<string> =>
    (
      await app.inject({
        method: 'POST',
        url: '/v1/execute',
        payload: body,
        headers: runner === undefined ? {} : { 'x-sandfleet-runner': runner }
      })
    ).json().runner
  try {
    assert.equal(await call(one.app, { code: 'x' }), 'r1', 'by load alone: r1')
    assert.equal(await call(one.app, { code: 'x', request_id: 'c1' }, 'r2'), 'r2', 'the caller names r2')
    assert.equal(await call(one.app, { code: 'x', request_id: 'c1' }), 'r2', 'this gateway sent c1 to r2')
    assert.equal(await call(other.app, { code: 'x', request_id: 'c1' }), 'r1', 'another gateway does not know it…')
    assert.equal(await call(other.app, { code: 'x', request_id: 'c1' }, 'r2'), 'r2', '…unless the caller names r2')
    assert.equal(await call(one.app, { code: 'x', request_id: 'c2' }, 'gone'), 'r1', 'a runner not up: by load')
  } finally {
    await one.app.close()
    await other.app.close()
  }
})

test('call places are per tenant and bounded', () => {
  const places = new CallPlaces(2, 1000)
  const a = callContext({ tenant: 'a' })
  const b = callContext({ tenant: 'b' })
  places.sent({ code: 'x', request_id: '1' }, a, 'r1', 0)
  assert.equal(places.where({ code: 'x', request_id: '1' }, a, 10), 'r1')
  assert.equal(places.where({ code: 'x', request_id: '1' }, b, 10), undefined, "another tenant's id")
  assert.equal(places.where({ code: 'x', request_id: '1' }, a, 2000), undefined, 'past its time')
  places.sent({ code: 'x', request_id: '2' }, a, 'r1', 0)
  places.sent({ code: 'x', request_id: '3' }, a, 'r1', 0)
  places.sent({ code: 'x', request_id: '4' }, a, 'r1', 0)
  assert.equal(places.where({ code: 'x', request_id: '2' }, a, 1), undefined, 'the oldest forgotten')
  assert.equal(places.where({ code: 'x', request_id: '4' }, a, 1), 'r1')
})
