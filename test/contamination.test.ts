/**
 * The contamination corpus (test/contamination/cases/, by class) on the `reuse` isolation level,
 * in one sandbox of each backend that has the level (process: bubblewrap; docker: a container):
 * before each case a probe finds its tier's reuse process warm and notes its pid and what it
 * sees; the case runs; a probe on the same tier must then see exactly what a fresh process sees,
 * in the same process when the case's fate is `reused` or `forked`, in a new one when it is
 * `retired` or `violated` (and the retirement counted under one of its reasons). A `violated`
 * case is itself answered infra_error: its process wrote what the controller cannot tell from
 * the process's own report.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveExecRequest, type ExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../services/runner/src/config.ts'
import { silentLogger } from '../services/runner/src/logger.ts'
import { ProcessDriver } from '../services/runner/src/backends/process/process-driver.ts'
import { DockerDriver } from '../services/runner/src/backends/docker/docker-driver.ts'
import type { Driver, DriverEvents, RunOutcome, Sandbox } from '../services/runner/src/sandbox/contract.ts'
import { REPO_EXECUTOR } from '../services/runner/test/helpers/docker.ts'
import { CASES, type Tier } from './contamination/cases.ts'
import { probe } from './contamination/probe.ts'

const BACKENDS: Record<string, (events: DriverEvents) => Driver> = {
  process: (events) =>
    new ProcessDriver({ config: runnerConfig({ isolation: 'reuse' }), logger: silentLogger, events }),
  docker: (events) =>
    new DockerDriver({
      runnerId: `contamination-${process.pid}`,
      executorPath: REPO_EXECUTOR,
      isolation: 'reuse',
      spares: 0,
      events
    })
}

for (const [backend, make] of Object.entries(BACKENDS)) {
  describe(`contamination corpus on ${backend}`, () => {
    /**
     * Retirements of reuse processes counted so far, by reason (the driver's events, as the runner's metrics count
     * them).
     */
    const retired = new Map<string, number>()
    const driver = make({
      reuse: (e) => {
        if (e.kind === 'retired') retired.set(e.reason, (retired.get(e.reason) ?? 0) + 1)
      }
    })
    let sandbox: Sandbox
    before(async () => {
      await driver.check()
      sandbox = driver.createSandbox(`contamination-${backend}`)
      await sandbox.start()
    })
    after(async () => {
      await sandbox?.close()
      await driver.close()
    })

    const run = async (code: string, extra: Partial<ExecRequest> = {}): Promise<RunOutcome> =>
      await sandbox.execute({
        request: resolveExecRequest({ code, timeout_ms: 20_000, ...extra }, { isolation: 'reuse' }),
        maxOutputBytes: 65536
      })

    /**
     * The tier's probe, run until it runs in the tier's reuse process (one is made after a retirement: a generous
     * wait).
     */
    async function probeReused(tier: Tier): Promise<{ facts: string; pid: string }> {
      const until = Date.now() + 60_000
      for (;;) {
        const r = await run(probe(tier))
        assert.deepEqual([r.status, r.tier], ['ok', tier], JSON.stringify(r))
        const [facts, pid] = r.stdout.trimEnd().split('\n')
        if (r.isolation === 'reuse') return { facts, pid }
        assert.ok(Date.now() < until, `no reuse process of tier ${tier} within 60 s`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    const fresh = new Map<Tier, string>()

    test(`${backend}: after each case the next job on its tier sees a fresh interpreter; the case is reused, retired, forked or violated as it must be`, async (t) => {
      assert.ok(CASES.length >= 80, `${CASES.length} cases`)
      for (const c of CASES) {
        await t.test(c.name, async () => {
          // Its tier, from a first run of the case itself on a fork (the reuse process stays untouched).
          const tier = (await run(c.code, { isolation: 'fork', stdin: c.stdin })).tier as Tier
          const { facts, pid } = await probeReused(tier)
          if (!fresh.has(tier)) fresh.set(tier, facts)
          assert.equal(facts, fresh.get(tier), `${tier}: the probe before the case saw what a fresh process sees`)
          const counted = new Map(retired)
          const r = await run(c.code, { stdin: c.stdin })
          if (c.fate === 'violated') {
            assert.deepEqual(
              [r.status, r.error?.type, r.isolation],
              ['infra_error', 'SF_ERR_RUNNER_REUSE_VIOLATION', 'reuse'],
              JSON.stringify(r)
            )
          } else {
            assert.ok(['ok', 'error'].includes(r.status), JSON.stringify(r))
            assert.equal(r.tier, tier)
            assert.equal(
              r.isolation,
              c.fate === 'forked' ? 'fork' : 'reuse',
              `the case ran at the level its fate says: ${JSON.stringify(r)}`
            )
          }
          const next = await probeReused(tier)
          assert.equal(next.facts, fresh.get(tier), `after "${c.name}" the probe on ${tier} sees a fresh interpreter`)
          const moved = [...retired].filter(([reason, n]) => n > (counted.get(reason) ?? 0)).map(([reason]) => reason)
          if (c.fate === 'retired' || c.fate === 'violated') {
            assert.notEqual(next.pid, pid, 'the process retired')
            assert.ok(
              moved.length === 1 && c.reasons?.includes(moved[0]),
              `retired for ${JSON.stringify(moved)}, expected one of ${JSON.stringify(c.reasons)}`
            )
          } else {
            assert.equal(next.pid, pid, `the same process took the next job (retirements: ${JSON.stringify(moved)})`)
          }
        })
      }
    })
  })
}
