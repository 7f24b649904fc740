import { test } from 'node:test'
import assert from 'node:assert/strict'
import { main, parseBuild } from '../src/serve-ab.ts'

test('serve-ab refuses fewer than two NAME=CHECKOUT builds, or a malformed one, before starting anything', async () => {
  assert.equal(await main([], {}), 2)
  assert.equal(await main(['only=/tmp'], {}), 2)
  assert.equal(await main(['a=/tmp', 'b'], {}), 2)
  assert.equal(await main(['a=/tmp', '=/tmp'], {}), 2)
})

test('a build may give its serve variables: NAME=CHECKOUT@VAR=VALUE@...; a malformed one is refused', async () => {
  assert.deepEqual(parseBuild('old=/repo@SANDFLEET_EXECUTOR_PATH=/tmp/x.py@A=b=c'), { name: 'old', dir: '/repo', env: { SANDFLEET_EXECUTOR_PATH: '/tmp/x.py', A: 'b=c' } })
  assert.deepEqual(parseBuild('new=/repo'), { name: 'new', dir: '/repo', env: {} })
  assert.equal(parseBuild('a=/repo@novalue'), undefined)
  assert.equal(parseBuild('a=@X=1'), undefined)
  assert.equal(await main(['a=/tmp@bad', 'b=/tmp'], {}), 2)
})
