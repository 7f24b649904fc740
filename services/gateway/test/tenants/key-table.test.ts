import { test } from 'node:test'
import assert from 'node:assert/strict'
import { KeyTable } from '../../src/tenants/key-table.ts'

test('KeyTable finds the value of exactly the key presented, whatever the lengths', () => {
  const table = new KeyTable([
    ['sk-alpha-0001', 'alpha'],
    ['sk-beta-00000002', 'beta'],
    ['ключ-юникод-3', 'unicode'],
    ['x'.repeat(4096), 'long']
  ])
  assert.equal(table.size, 4)
  assert.equal(table.find('sk-alpha-0001'), 'alpha')
  assert.equal(table.find('sk-beta-00000002'), 'beta')
  assert.equal(table.find('ключ-юникод-3'), 'unicode')
  assert.equal(table.find('x'.repeat(4096)), 'long')
  for (const wrong of [
    '',
    'sk-alpha-000',
    'sk-alpha-00011',
    'SK-ALPHA-0001',
    'sk-alpha-0002',
    'x'.repeat(4095),
    'ключ-юникод-4',
    'sk-alpha-0001\n'
  ]) {
    assert.equal(table.find(wrong), undefined, JSON.stringify(wrong.slice(0, 20)))
  }
})

test('KeyTable: an empty table finds nothing; the last of two equal keys wins (the loader refuses duplicates)', () => {
  assert.equal(new KeyTable<string>([]).find('anything'), undefined)
  assert.equal(
    new KeyTable([
      ['same-key-1', 'first'],
      ['same-key-1', 'second']
    ]).find('same-key-1'),
    'second'
  )
})
