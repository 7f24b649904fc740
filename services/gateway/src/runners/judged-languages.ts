/**
 * The languages the fleet judges, as its routable runners report them (`RunnerInfo.judge_languages`, with the versions
 * their sandboxes run), asked of all at once at most every `ttlMs`: what the compatible APIs offer (code-judge's `cpp`,
 * SandboxFusion's languages, a runtimes list, MCP's `judge` tool), so that a language no runner judges is refused in
 * each API's own shape before anything runs, never answered as a fault of the fleet.
 */
import type { JudgeLanguageInfo } from '@sandfleet/protocol'
import type { RunnerSet } from './runner-set.ts'

/** How long an answer is taken as known, ms. */
const TTL_MS = 30_000

/** What the fleet judges now. */
export interface JudgedLanguages {
  /**
   * Each language judged by a routable runner that answered, by name, with the version of the first runner that reports
   * it (in a mixed fleet, the lowest in sort order); `undefined` when no runner answered (nothing is known: a call is
   * sent, and the fleet answers for itself).
   */
  byName: ReadonlyMap<string, JudgeLanguageInfo> | undefined
}

/** Asks `runners` what they judge, at most every `ttlMs`; concurrent askers share one round of questions. */
export function judgedLanguages(runners: Pick<RunnerSet, 'members'>, ttlMs = TTL_MS): () => Promise<JudgedLanguages> {
  let last: { at: number; answer: Promise<JudgedLanguages> } | undefined
  const ask = async (): Promise<JudgedLanguages> => {
    const infos = await Promise.all(
      runners.members
        .filter((m) => m.routable)
        .map(async (m) => {
          try {
            return await m.client.info()
          } catch {
            return undefined
          }
        })
    )
    const answered = infos.filter((i) => i !== undefined)
    if (answered.length === 0) return { byName: undefined }
    const byName = new Map<string, JudgeLanguageInfo>()
    for (const l of answered
      .flatMap((i) => i.judge_languages ?? [])
      .sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0)))
      if (!byName.has(l.name)) byName.set(l.name, l)
    return { byName }
  }
  return async () => {
    if (last === undefined || Date.now() - last.at > ttlMs) {
      const asked = { at: Date.now(), answer: ask() }
      last = asked
      // a fleet that did not answer is asked again by the next caller, not taken as judging nothing
      void asked.answer.then((a) => {
        if (a.byName === undefined && last === asked) last = undefined
      })
    }
    return await last.answer
  }
}
