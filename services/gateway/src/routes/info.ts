/**
 * `GET /v1/info`: what the fleet runs. The gateway asks each of its runners for its own info
 * (backend, isolation, the sandbox environment's manifest) at the time of the request and lists
 * them, with the distinct backends and Python versions on top; a runner that does not answer is
 * listed with `up: false` and why.
 */
import type { FastifyInstance } from 'fastify'
import { RUNNER_PATHS, type GatewayInfo, type RunnerInfo } from '@sandfleet/protocol'
import type { RunnerSet } from '../runners/runner-set.ts'
import type { RouteSchemas } from '../schemas.ts'

/** Gathers the info of every member of `set`. */
export async function gatewayInfo(set: RunnerSet): Promise<GatewayInfo> {
  const runners = await Promise.all(
    set.members.map(async (m): Promise<GatewayInfo['runners'][number]> => {
      try {
        return { member: m.client.name, up: true, info: await m.client.info() }
      } catch (err) {
        return { member: m.client.name, up: false, info: null, error: err instanceof Error ? err.message : String(err) }
      }
    })
  )
  const answered = runners.flatMap((r) => (r.info === null ? [] : [r.info]))
  return {
    runners,
    backends: [...new Set(answered.map((i) => i.backend))].sort(),
    pythons: [...new Set(answered.flatMap((i) => (i.manifest === null ? [] : [i.manifest.python])))].sort(),
    judge_languages: judgeLanguages(answered)
  }
}

/** The languages judged by any of `infos`, in the order the runners list them, each with its distinct versions. */
export function judgeLanguages(infos: readonly RunnerInfo[]): NonNullable<GatewayInfo['judge_languages']> {
  const byName = new Map<string, NonNullable<GatewayInfo['judge_languages']>[number]>()
  for (const info of infos) {
    for (const l of info.judge_languages ?? []) {
      let entry = byName.get(l.name)
      if (entry === undefined)
        byName.set(
          l.name,
          (entry = { name: l.name, aliases: [...l.aliases], title: l.title, versions: [], runners: 0 })
        )
      entry.runners++
      if (!entry.versions.includes(l.version)) entry.versions = [...entry.versions, l.version].sort()
    }
  }
  return [...byName.values()]
}

/** Registers the route. */
export function infoRoute(app: FastifyInstance, set: RunnerSet, schemas: RouteSchemas): void {
  app.get(
    RUNNER_PATHS.info,
    {
      schema: {
        operationId: 'info',
        summary:
          "What the fleet runs: each runner's backend, isolation and sandbox environment (Python and package versions), and the languages it judges with their versions",
        tags: ['operations'],
        response: { 200: schemas.gatewayInfo, '4xx': schemas.errorBody, '5xx': schemas.errorBody }
      }
    },
    async () => await gatewayInfo(set)
  )
}
