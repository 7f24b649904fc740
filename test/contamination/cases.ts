/**
 * The contamination corpus of the `reuse` isolation level, one file a class in `cases/` (what a
 * job can change and how the level keeps it from the next job: types.ts); contamination.test.ts
 * runs every case and a probe after it on the same sandbox, on the process and docker backends.
 */
import type { ContaminationCase } from './types.ts'
import { NAMESPACE } from './cases/namespace.ts'
import { MODULE_STATE } from './cases/module-state.ts'
import { PROCESS } from './cases/process.ts'
import { FORKED } from './cases/forked.ts'

export type { ContaminationCase, Tier } from './types.ts'

/** Every case, by class. */
export const CLASSES: Record<string, ContaminationCase[]> = {
  namespace: NAMESPACE,
  'module state': MODULE_STATE,
  process: PROCESS,
  forked: FORKED
}

export const CASES: ContaminationCase[] = Object.values(CLASSES).flat()
