import { test } from 'node:test'
import assert from 'node:assert/strict'
import { main } from '../src/serve-ab.ts'

test('serve-ab refuses fewer than two NAME=CHECKOUT builds, or a malformed one, before starting anything', async () => {
  assert.equal(await main([], {}), 2)
  assert.equal(await main(['only=/tmp'], {}), 2)
  assert.equal(await main(['a=/tmp', 'b'], {}), 2)
  assert.equal(await main(['a=/tmp', '=/tmp'], {}), 2)
})
