import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { SignalGroups } from '../../src/pool/signal-groups.ts'

interface Item {
  name: string
  group: Set<Item> | undefined
}
const item = (name: string): Item => ({ name, group: undefined })

test('a signal gets one listener however many items wait under it; its abort hands over those still there, in order, once', () => {
  const aborted: string[][] = []
  const groups = new SignalGroups<Item>((items) => {
    aborted.push([...items].map((i) => i.name))
  })
  const a = new AbortController()
  const b = new AbortController()
  const items = ['x', 'y', 'z', 'w'].map(item)
  for (const i of items.slice(0, 3)) groups.add(a.signal, i)
  groups.add(b.signal, items[3])
  assert.equal(getEventListeners(a.signal, 'abort').length, 1)
  groups.delete(items[1])
  groups.delete(items[1])
  a.abort()
  assert.deepEqual(aborted, [['x', 'z']])
  assert.ok(
    items.slice(0, 3).every((i) => i.group === undefined),
    'no item is left pointing at a group'
  )
  assert.equal(items[3].group?.size, 1, "another signal's items are not touched")
  b.abort()
  assert.deepEqual(aborted, [['x', 'z'], ['w']])
})
