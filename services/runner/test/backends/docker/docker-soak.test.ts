// 500 mixed jobs (20 of them timeouts) through a runner on the docker backend: every answer
// right, no container of the runner left afterwards, no zombie process that stays.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import type { ExecRequest, ExecResult } from '@sandfleet/protocol'
import { Runner } from '../../../src/runner/runner.ts'
import { runnerConfig } from '../../../src/config.ts'
import { DockerEngine, resolveDockerOptions } from '../../../src/backends/docker/docker-engine.ts'
import { REPO_EXECUTOR } from '../../helpers/docker.ts'

/** Host processes in state Z that belong to one of `containers` (by cgroup) or are children of this process. */
function zombies(containers: readonly string[]): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue
    }
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (state !== 'Z') continue
    let cgroup = ''
    try {
      cgroup = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    } catch {}
    if (Number(ppid) === process.pid || containers.some((id) => cgroup.includes(id)))
      found.push(`${pid} ${stat.slice(0, 80)}`)
  }
  return found
}

/**
 * The zombies that stay: a process is a zombie for a moment while a retired container is torn
 * down (its processes die one by one), so a zombie counts only if it is still there after a
 * generous wait; a leaked one never goes.
 */
async function lastingZombies(containers: readonly string[]): Promise<string[]> {
  const until = Date.now() + 15_000
  let found = zombies(containers)
  while (found.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    found = zombies(containers)
  }
  return found
}

interface Kind {
  request: ExecRequest
  check: (r: ExecResult) => void
}

function kind(i: number): Kind {
  if (i % 25 === 7)
    return {
      request: { code: 'while True: pass', timeout_ms: 200 },
      check: (r) => {
        assert.equal(r.status, 'timeout')
      }
    }
  switch (i % 6) {
    case 0:
      return {
        request: { code: `print(${i} * 2)` },
        check: (r) => {
          assert.deepEqual([r.status, r.stdout], ['ok', `${i * 2}\n`])
        }
      }
    case 1:
      return {
        request: { code: 'raise ValueError("bad")' },
        check: (r) => {
          assert.deepEqual([r.status, r.error?.type], ['error', 'ValueError'])
        }
      }
    case 2:
      return {
        request: { code: 'import sys; sys.exit(3)' },
        check: (r) => {
          assert.deepEqual([r.status, r.exit_code], ['error', 3])
        }
      }
    case 3:
      return {
        request: { code: 'import sys; print(sys.stdin.read().upper())', stdin: `in${i}` },
        check: (r) => {
          assert.deepEqual([r.status, r.stdout], ['ok', `IN${i}\n`])
        }
      }
    // A child that outlives the job, and one that exits unreaped (a zombie until the sweep).
    case 4:
      return {
        request: {
          code: 'import os, time\nif os.fork() == 0:\n  time.sleep(30)\nif os.fork() == 0:\n  os._exit(0)\nprint("left")'
        },
        check: (r) => {
          assert.deepEqual([r.status, r.stdout], ['ok', 'left\n'])
        }
      }
    default:
      return {
        request: { code: 'import numpy\nprint(int(numpy.arange(10).sum()))' },
        check: (r) => {
          assert.deepEqual([r.status, r.stdout], ['ok', '45\n'])
        }
      }
  }
}

test('docker backend: 500 mixed jobs with 20 timeouts, all answered right and no container replaced; no container and no zombie left', async () => {
  const id = `docker-soak-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId: id }))
  assert.deepEqual(await engine.listContainers(), [], 'no container of this runner before')
  const runner = new Runner(
    runnerConfig({
      id,
      backend: 'docker',
      languages: ['python'],
      poolSize: 4,
      maxSessions: 0,
      executorPath: REPO_EXECUTOR
    })
  )
  let closed = false
  try {
    await runner.start()
    assert.equal(runner.load().backend, 'docker')
    const kinds = Array.from({ length: 500 }, (_, i) => kind(i))
    assert.equal(kinds.filter((k) => k.request.timeout_ms === 200).length, 20)
    const results = new Array<ExecResult>(kinds.length)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < kinds.length) {
        const i = next++
        results[i] = await runner.execute({ ...kinds[i].request, request_id: `r${i}` })
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    results.forEach((r, i) => {
      assert.equal(r.request_id, `r${i}`)
      try {
        kinds[i].check(r)
      } catch (err) {
        throw new Error(`job ${i} (${kinds[i].request.code}): ${JSON.stringify(r).slice(0, 400)}`, { cause: err })
      }
    })
    const live = await engine.listContainers()
    assert.ok(live.length >= 4 && live.length <= 8, `${live.length} containers for a pool of 4`)
    assert.deepEqual(await lastingZombies(live), [], 'zombie processes while the runner serves')
    assert.equal(runner.poolStats()[0].replacements, 0, 'a timeout costs the job, not the container')
    await runner.close()
    closed = true
    assert.deepEqual(await engine.listContainers(), [], 'containers of the runner left after close')
    assert.deepEqual(await lastingZombies(live), [], 'zombie processes after close')
  } finally {
    if (!closed) await runner.close()
    await engine.removeContainers()
  }
})
