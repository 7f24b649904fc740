/**
 * SandboxFusion's response shapes, with its field names: the schemas give the types the mapper
 * (sandbox-fusion-map.ts) builds and the API document's description of `/run_code` and
 * `/run_jupyter`. Request schemas come from the request models (`modelSchema`).
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../fastapi/fastapi-schemas.ts'

/** Schema of {@link CommandRunResult}. */
export const CommandRunResultSchema = Type.Object(
  {
    status: StringEnum(['Finished', 'Error', 'TimeLimitExceeded'] as const, {
      description: 'Finished: the process ran to its end (see return_code); TimeLimitExceeded: killed at run_timeout'
    }),
    execution_time: Nullable(Type.Number(), { description: 'Seconds' }),
    return_code: Nullable(Type.Integer(), { description: 'Exit code; null when killed at the time limit' }),
    stdout: Nullable(Type.String()),
    stderr: Nullable(Type.String())
  },
  { title: 'CommandRunResult', additionalProperties: false }
)

/** SandboxFusion's `CommandRunResult`. */
export type CommandRunResult = Static<typeof CommandRunResultSchema>

const RunStatusSchema = StringEnum(['Success', 'Failed', 'SandboxError'] as const, {
  description:
    'Success: ran and exited 0; Failed: the code failed (run_result says how); SandboxError: the fleet could not run it (retriable)'
})

const FilesSchema = Type.Record(Type.String(), Type.String(), {
  description: 'The requested fetch_files that existed: path → base64 content'
})

/** Schema of {@link RunCodeResponse}. */
export const RunCodeResponseSchema = Type.Object(
  {
    status: RunStatusSchema,
    message: Type.String(),
    compile_result: Nullable(CommandRunResultSchema, {
      description:
        "A compiled language's compile step (Finished with the compiler's return code, TimeLimitExceeded past compile_timeout); null for python and nodejs, which are not compiled"
    }),
    run_result: Nullable(CommandRunResultSchema, {
      description: 'null when the fleet could not run the code (SandboxError), or the compile step failed'
    }),
    executor_pod_name: Nullable(Type.String(), { description: 'The runner that ran it' }),
    files: FilesSchema
  },
  { title: 'RunCodeResponse', additionalProperties: false }
)

/** SandboxFusion's `RunCodeResponse`. */
export type RunCodeResponse = Static<typeof RunCodeResponseSchema>

/** Schema of {@link JupyterCell}. */
export const JupyterCellSchema = Type.Object(
  {
    stdout: Type.String(),
    stderr: Type.String(),
    display: Type.Array(Type.Record(Type.String(), Type.String()), {
      description: 'Rich results: MIME type → content ({"text/plain": repr} for a cell ending in an expression)'
    }),
    error: Type.Array(
      Type.Object(
        {
          ename: Type.String(),
          evalue: Type.String(),
          traceback: Type.Array(Type.String())
        },
        { additionalProperties: false }
      ),
      { description: 'The exception the cell raised, if any' }
    )
  },
  { title: 'JupyterCell', additionalProperties: false }
)

/** One cell of a `RunJupyterResponse`. */
export type JupyterCell = Static<typeof JupyterCellSchema>

/** Schema of {@link RunJupyterResponse}. */
export const RunJupyterResponseSchema = Type.Object(
  {
    status: RunStatusSchema,
    message: Type.String(),
    driver: Nullable(CommandRunResultSchema, {
      description: 'The run as a whole (TimeLimitExceeded when a cell or total_timeout was passed)'
    }),
    cells: Type.Array(JupyterCellSchema),
    executor_pod_name: Nullable(Type.String()),
    files: FilesSchema
  },
  { title: 'RunJupyterResponse', additionalProperties: false }
)

/** SandboxFusion's `RunJupyterResponse`. */
export type RunJupyterResponse = Static<typeof RunJupyterResponseSchema>
