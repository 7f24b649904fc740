/**
 * code-judge's response shapes, with its field names: the schemas give the types the mapper
 * (code-judge-map.ts) builds and the API document's description of its routes. Request schemas
 * come from the request models (`modelSchema`).
 */
import { Type, type Static, type TArray, type TObject, type TSchema, type TString } from '@sinclair/typebox'
import { StringEnum } from '../fastapi/fastapi-schemas.ts'

/** code-judge's `reason` values. */
export const REASONS = ['', 'worker_timeout', 'queue_timeout', 'internal_error', 'invalid_input'] as const

const judgeFields = {
  sub_id: Type.String({ description: "The submission's sub_id, or a new UUID" }),
  success: Type.Boolean({
    description: 'run_success and, when expected_output was given, stdout equal to it (both stripped)'
  }),
  run_success: Type.Boolean({ description: 'The program ran and exited 0' }),
  cost: Type.Number({ description: 'Run time, seconds' }),
  reason: StringEnum(REASONS, {
    description:
      '"" when the program ran to its end (a failure\'s traceback is in stderr); worker_timeout: killed at the time limit; queue_timeout: the fleet was busy (retriable); internal_error: the fleet failed, or a submission type sandfleet does not run (cpp); invalid_input: past a configured limit'
  })
}

/** Schema of {@link JudgeResult}. */
export const JudgeResultSchema = Type.Object(judgeFields, { title: 'JudgeResult', additionalProperties: false })

/** A `/judge` result (no output). */
export type JudgeResult = Static<typeof JudgeResultSchema>

/** Schema of {@link RunResult}. */
export const RunResultSchema = Type.Object(
  {
    ...judgeFields,
    stdout: Type.String({
      description: "Cut at the deployment's limit (code-judge's 1,000 characters by default); a cut is said in stderr"
    }),
    stderr: Type.String()
  },
  { title: 'RunResult', additionalProperties: false }
)

/** A `/run` result: a judge result with the output. */
export type RunResult = Static<typeof RunResultSchema>

/** Schema of a batch answer whose results are `result`s. */
export function batchResultSchema<T extends TSchema>(
  result: T,
  title: string
): TObject<{ sub_id: TString; results: TArray<T> }> {
  return Type.Object(
    {
      sub_id: Type.String({ description: "The batch's sub_id, or a new UUID" }),
      results: Type.Array(result, { description: 'One per submission, in order' })
    },
    { title, additionalProperties: false }
  )
}

/** A batch answer. */
export interface BatchResult<R extends JudgeResult> {
  sub_id: string
  results: R[]
}

/** Schema of `GET /status`. */
export const CodeJudgeStatusSchema = Type.Object(
  {
    queue: Type.Integer({ minimum: 0, description: 'Python jobs waiting for a sandbox across the fleet' }),
    num_workers: Type.Integer({ minimum: 0, description: 'Python sandboxes that can run at once across the fleet' })
  },
  { title: 'CodeJudgeStatus', additionalProperties: false }
)
