/**
 * Piston's shapes, with its field names: the schemas give the types the mapper (piston-map.ts)
 * builds and the API document's description of its routes. The routes validate as Piston does
 * (`problemOf`, piston-map.ts), so these only describe.
 */
import { Type, type Static, type TNull, type TString, type TUnion } from '@sinclair/typebox'

const nullableString = (description: string): TUnion<[TString, TNull]> =>
  Type.Union([Type.String(), Type.Null()], { description })

/** Schema of a `POST /api/v2/execute` body. */
export const PistonRequestSchema = Type.Object(
  {
    language: Type.String({
      description: 'python (py, py3, python3), javascript (js, node-js, node), c++ (cpp, g++) or c (gcc)'
    }),
    version: Type.String({
      description: 'Any version (a semver, or *): the fleet runs the one it has and says which in the answer'
    }),
    files: Type.Array(
      Type.Object({
        name: Type.Optional(Type.String({ description: 'Its name in the working directory' })),
        content: Type.String(),
        encoding: Type.Optional(
          Type.String({ enum: ['utf8', 'base64', 'hex'], description: 'Of content (default utf8)' })
        )
      }),
      { minItems: 1, description: 'The first is the program; the others are written beside it' }
    ),
    stdin: Type.Optional(Type.String()),
    args: Type.Optional(
      Type.Array(Type.String(), { description: "The program's command line (sys.argv[1:]; python only)" })
    ),
    compile_timeout: Type.Optional(
      Type.Integer({ description: 'ms the compile step of c++ and c may take (default 10000); unused for the others' })
    ),
    run_timeout: Type.Optional(
      Type.Integer({ description: "ms (default Piston's 3000, at most the deployment's maxTimeoutMs)" })
    ),
    compile_memory_limit: Type.Optional(Type.Integer({ description: 'Accepted and unused' })),
    run_memory_limit: Type.Optional(Type.Integer({ description: "Bytes; -1 (default): the fleet's default" }))
  },
  { title: 'PistonRequest', examples: [{ language: 'python', version: '*', files: [{ content: 'print(6 * 7)' }] }] }
)

/** Schema of {@link PistonRun}. */
export const PistonRunSchema = Type.Object(
  {
    stdout: Type.String(),
    stderr: Type.String({ description: "A cut of stdout or stderr at the fleet's output cap is said at its end" }),
    output: Type.String({ description: 'stdout, then stderr' }),
    code: Type.Union([Type.Integer(), Type.Null()], { description: 'Exit code; null when the run was killed' }),
    signal: nullableString('SIGKILL when the run was killed (time, memory), else null'),
    message: nullableString('How the run ended, when not with code 0'),
    status: nullableString('RE exited with an error, TO time limit, MO memory limit, SG killed; null when it exited 0'),
    cpu_time: Type.Optional(Type.Integer({ description: 'CPU time, ms' })),
    wall_time: Type.Integer({ description: 'Run time, ms' })
  },
  { title: 'PistonRun', additionalProperties: false }
)

/** How a program's run ended. */
export type PistonRun = Static<typeof PistonRunSchema>

/** Schema of {@link PistonResult}. */
export const PistonResultSchema = Type.Object(
  {
    language: Type.String({ description: 'The language it ran as' }),
    version: Type.String({ description: 'The version the fleet ran' }),
    compile: Type.Optional(PistonRunSchema),
    run: PistonRunSchema
  },
  {
    title: 'PistonResult',
    additionalProperties: false,
    description:
      'c++ and c have the compile stage in compile (status RE and the messages in stderr when it failed, and then run repeats it, as Piston answers)'
  }
)

/** A `POST /api/v2/execute` answer (`compile` for c++ and c; python and javascript are interpreted). */
export type PistonResult = Static<typeof PistonResultSchema>

/** Schema of one `GET /api/v2/runtimes` item. */
export const PistonRuntimeSchema = Type.Object(
  {
    language: Type.String(),
    version: Type.String({
      description: "The version the fleet runs (its runners' Python, their g++ and gcc, when they report them)"
    }),
    aliases: Type.Array(Type.String()),
    runtime: Type.String({
      description: 'What runs it: cpython, v8 (an isolate: no Node API), or gcc (c++ and c, compiled in the sandbox)'
    })
  },
  { title: 'PistonRuntime', additionalProperties: false }
)

/** Piston's error body: `{message}` (bad input 400, past a quota 429, the fleet 5xx). */
export const PistonErrorSchema = Type.Object(
  {
    message: Type.String({ description: 'What went wrong; bad input names its field' })
  },
  { title: 'PistonError', additionalProperties: false }
)

/** The responses of a Piston route besides its 200. */
export const PISTON_ERRORS = Object.freeze({
  '4xx': {
    description:
      "Bad input (400, naming the field), a missing API key (401), past the API key's quota (429, with Retry-After), a body too large (413)",
    ...PistonErrorSchema
  },
  '5xx': {
    description: "The fleet could not run it (500; 503 busy, with Retry-After): retriable, never a run's result",
    ...PistonErrorSchema
  }
})
