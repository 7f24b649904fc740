import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { treeCpuMs } from '../src/cpu.ts'

test("treeCpuMs counts the CPU of a reaped child in its parent's tree, not only the parent's own", () => {
  const before = treeCpuMs(process.pid)
  assert.ok(before !== undefined, '/proc is readable')
  // The child spins until it has used 300 ms of CPU (not of wall time), then exits and is reaped.
  const child = spawnSync(process.execPath, ['-e', 'while (process.cpuUsage().user < 300_000) {}'])
  assert.equal(child.status, 0)
  const after = treeCpuMs(process.pid)
  assert.ok(after !== undefined)
  const grew = after.userMs + after.kernelMs - (before.userMs + before.kernelMs)
  assert.ok(grew >= 250, `the tree grew by ${grew} ms of CPU, the child alone used ≥ 300 ms`)
  assert.ok(after.rootMs >= before.rootMs)
  assert.ok(after.reapedMs - before.reapedMs >= 250, 'the exited child is counted as reaped')
  assert.ok(after.rootMs < after.userMs + after.kernelMs, "the root's own time leaves out its children's")
  assert.equal(treeCpuMs(2 ** 22 + 12345), undefined, 'no such process')
})

test("treeCpuMs gives the root's main thread its share of the root's own CPU", () => {
  const before = treeCpuMs(process.pid)
  assert.ok(before !== undefined)
  const spinUntil = process.cpuUsage().user + 200_000
  while (process.cpuUsage().user < spinUntil) continue // 200 ms on this (the main) thread
  const after = treeCpuMs(process.pid)
  assert.ok(after !== undefined)
  assert.ok(
    after.mainThreadMs - before.mainThreadMs >= 150,
    `the main thread grew by ${after.mainThreadMs - before.mainThreadMs} ms; it spun for 200`
  )
  assert.ok(after.mainThreadMs <= after.rootMs, 'the main thread is part of the root process')
})
