import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { runnerConfig } from '../../../src/config.ts'
import { ProcessDriver } from '../../../src/backends/process/process-driver.ts'
import type { ProcessSandbox } from '../../../src/backends/process/process-sandbox.ts'
import { silentLogger } from '../../../src/logger.ts'

/** Live (not zombie) processes whose process group is `pgid`, from /proc. */
function liveInGroup(pgid: number): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces, so read after its closing parenthesis
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') found.push(Number(entry))
  }
  return found
}

test('a bubblewrap sandbox closed while it is still starting leaves no process behind (regression: orphaned bwrap)', async () => {
  const driver = new ProcessDriver({ config: runnerConfig({ backend: 'process' }), logger: silentLogger })
  const pids: number[] = []
  for (let i = 0; i < 20; i++) {
    const sandbox = driver.createSandbox(`early-${i}`) as ProcessSandbox
    const starting = sandbox.start().catch(() => {})
    await sleep(i % 5) // close at different points of the set-up
    if (sandbox.pid !== undefined) pids.push(sandbox.pid)
    await sandbox.close()
    await starting
  }
  await sleep(200)
  assert.equal(pids.length, 20)
  assert.deepEqual(pids.flatMap(liveInGroup), [], 'no process of any sandbox group is left')
})
