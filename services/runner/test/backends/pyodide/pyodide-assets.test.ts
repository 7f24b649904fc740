import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pruneSnapshots } from '../../../src/backends/pyodide/pyodide-assets.ts'

test('pyodide snapshot cache: keeps the snapshots used last, drops the rest and stale temporary files', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-snapshots-'))
  t.after(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const at = (name: string, secondsAgo: number): void => {
    writeFileSync(join(dir, name), 'x')
    const when = new Date(Date.now() - secondsAgo * 1000)
    utimesSync(join(dir, name), when, when)
  }
  for (let i = 0; i < 6; i++) at(`snapshot-0.29.5-key${i}.bin`, (i + 1) * 60)
  at('snapshot-0.29.5-key9.bin.123.tmp', 2 * 3600)
  at('snapshot-0.29.5-key8.bin.456.tmp', 60)
  at('unrelated.txt', 10 * 3600)
  pruneSnapshots(dir, 3)
  assert.deepEqual(readdirSync(dir).sort(), [
    'snapshot-0.29.5-key0.bin',
    'snapshot-0.29.5-key1.bin',
    'snapshot-0.29.5-key2.bin',
    'snapshot-0.29.5-key8.bin.456.tmp', // a write that may still be going on
    'unrelated.txt'
  ])
})
