import { test } from 'node:test'
import assert from 'node:assert/strict'
import { callsOf } from '../../src/plugins/quotas.ts'

test('callsOf: a batch weighs its items, an MCP message its tool calls, anything else one call', () => {
  assert.equal(callsOf('/v1/execute', { code: 'x' }), 1)
  assert.equal(callsOf('/v1/execute/batch', { requests: [{}, {}, {}] }), 3)
  assert.equal(callsOf('/v1/execute/batch', { requests: [] }), 1, 'an empty batch still counts as a request')
  assert.equal(callsOf('/run/long-batch', { submissions: [{}, {}] }), 2)
  assert.equal(callsOf('/judge/batch', { submissions: 'not a list' }), 1)
  assert.equal(callsOf('/v1/sessions', null), 1)
  assert.equal(callsOf('/run_jupyter', { cells: ['a', 'b'] }), 1, 'cells run one at a time in one session')
  assert.equal(callsOf('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }), 1)
  assert.equal(callsOf('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }), 0, 'listing tools runs nothing')
  assert.equal(callsOf('/mcp', [{ method: 'tools/call' }, { method: 'initialize' }, { method: 'tools/call' }]), 2)
})
