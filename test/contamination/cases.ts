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
import { SLOTS_AND_CACHES } from './cases/slots-and-caches.ts'
import { FRAMES_AND_NAMES } from './cases/frames-and-names.ts'
import { REPORT_PIPE } from './cases/report-pipe.ts'
import { C_STATE } from './cases/c-state.ts'

export type { ContaminationCase, Tier } from './types.ts'

/** Every case, by class. */
export const CLASSES: Record<string, ContaminationCase[]> = {
  namespace: NAMESPACE,
  'module state': MODULE_STATE,
  process: PROCESS,
  forked: FORKED,
  'slots and caches': SLOTS_AND_CACHES,
  'frames and names': FRAMES_AND_NAMES,
  'report and job pipes': REPORT_PIPE,
  'C state': C_STATE
}

export const CASES: ContaminationCase[] = Object.values(CLASSES).flat()
