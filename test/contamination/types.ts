/**
 * The contamination corpus of the `reuse` isolation level: jobs that try to leave something for
 * the next job in their process (a patched function, a setting, a thread, a descriptor, a file,
 * a seeded generator, …), each with its fate: `reused` (the check finds nothing, or what the job
 * changed is the job's own and put back: the same process takes the next job), `retired` (the
 * check, or the watch while it ran, finds what it left: the process retires; `reasons` are the
 * ones the metrics may name), `forked` (its code names what the check cannot follow: it runs
 * in a fork, and the reuse process never sees it), or `violated` (it wrote on the report pipe its
 * process shares with it: the controller, which cannot tell its lines from the process's, kills
 * the process and answers the job infra_error, SF_ERR_RUNNER_REUSE_VIOLATION). Whatever the fate,
 * the probe after it must see the interpreter as a fresh process has it (contamination.test.ts).
 */

/** The zygote tiers: a case runs on the one its imports choose, and its probe on the same. */
export type Tier = 'bare' | 'std' | 'sym' | 'sci'

export interface ContaminationCase {
  name: string
  code: string
  fate: 'reused' | 'retired' | 'forked' | 'violated'
  /** `retired`: the reasons its retirement may be counted under. */
  reasons?: string[]
  stdin?: string
}

export const retired = (name: string, code: string, ...reasons: string[]): ContaminationCase => ({
  name,
  code,
  fate: 'retired',
  reasons
})
export const reused = (name: string, code: string): ContaminationCase => ({ name, code, fate: 'reused' })
export const forked = (name: string, code: string): ContaminationCase => ({ name, code, fate: 'forked' })
export const violated = (name: string, code: string): ContaminationCase => ({
  name,
  code,
  fate: 'violated',
  reasons: ['violation']
})
