/**
 * A program judged against its tests in one call: {@link JudgeRequest} in, {@link JudgeResult} out. One sandbox judges
 * the whole submission: the program is compiled once, then each test runs in a fresh process under its own limits,
 * and its output is compared outside the sandbox, where the program cannot reach the expected outputs.
 *
 * The verdict blames one party, as an {@link ExecResult}'s status does: the program (`accepted` … `output_limit`), the
 * fleet (`overloaded`, `queue_timeout`, `infra_error`: retriable, never a verdict on the program) or the caller
 * (`invalid_request`: a checker that does not compile or crashes; a request the schema refuses is an HTTP 400).
 */
import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox'
import { boundedInteger } from './bounded-integer.ts'
import { ISOLATION_LEVELS, LIMITS, mayHaveRun, type IsolationLevel } from './exec.ts'
import { GRACES } from './deadlines.ts'
import { FLEET_STATUSES } from './status.ts'
import {
  JUDGE_LANGUAGE_NAMES,
  JUDGE_LANGUAGE_TABLE,
  judgeLanguageRow,
  type JudgeLanguage,
  type JudgeLanguageRow
} from './judge-languages.ts'

/** Bounds and defaults of a judge request, beside the contract's {@link LIMITS}. */
export const JUDGE_LIMITS = Object.freeze({
  /** Most tests in one request. */
  maxTests: 1024,
  /** Default `timeout_ms` of each test. */
  defaultTimeoutMs: 4000,
  /** Default `compile_timeout_ms`. */
  defaultCompileTimeoutMs: 10_000,
  /** Default `memory_mb` of each test. */
  defaultMemoryMb: LIMITS.defaultMemoryMb,
  /** A checker runs each test at least this long (its own time limit is the larger of this and `timeout_ms`). */
  checkerMinTimeoutMs: 5000,
  /** Largest `{"float": tolerance}`. */
  maxFloatTolerance: 1,
  /** Longest function name of a `call` test. */
  maxFunctionName: 128
})

/** What a program's run earns: the verdicts on the program. */
export const PROGRAM_VERDICTS = [
  'accepted',
  'wrong_answer',
  'time_limit',
  'memory_limit',
  'runtime_error',
  'compile_error',
  'output_limit'
] as const
/** A verdict on the program. */
export type ProgramVerdict = (typeof PROGRAM_VERDICTS)[number]

/**
 * Every verdict of a {@link JudgeResult}: the program's, the fleet's (retriable), and `invalid_request` (the caller's
 * checker did not compile or did not end well: nothing is said of the program).
 */
export const JUDGE_VERDICTS = [...PROGRAM_VERDICTS, ...FLEET_STATUSES, 'invalid_request'] as const
/** A judge's verdict. */
export type JudgeVerdict = (typeof JUDGE_VERDICTS)[number]

/** What one test gets: the program's verdicts but `compile_error`, and `skipped` (not run: an earlier test failed). */
export const TEST_VERDICTS = [
  'accepted',
  'wrong_answer',
  'time_limit',
  'memory_limit',
  'runtime_error',
  'output_limit',
  'skipped'
] as const
/** A test's verdict. */
export type TestVerdict = (typeof TEST_VERDICTS)[number]

/** How a compile step ended: `ok`; `error` (the compiler refused the code); or a limit it ran into. */
export const COMPILE_STATUSES = ['ok', 'error', 'time_limit', 'memory_limit', 'output_limit'] as const
/** A compile step's status. */
export type CompileStatus = (typeof COMPILE_STATUSES)[number]

const retriable: ReadonlySet<string> = new Set(FLEET_STATUSES)

/** True for the fleet's verdicts (overloaded, queue_timeout, infra_error): retriable, never the program's doing. */
export function isRetriableVerdict(verdict: JudgeVerdict): boolean {
  return retriable.has(verdict)
}

/** True for a verdict on the program (it compiled, or failed to, and ran). */
export function isProgramVerdict(verdict: JudgeVerdict): verdict is ProgramVerdict {
  return (PROGRAM_VERDICTS as readonly string[]).includes(verdict)
}

/** A union of string literals (its static type theirs). */
function literals<T extends string>(values: readonly T[], options: object = {}): TUnion<Array<TLiteral<T>>> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options
  )
}

const LanguageSchema = (description: string): TUnion<Array<TLiteral<string>>> =>
  literals(JUDGE_LANGUAGE_NAMES, {
    description: `${description}: ${JUDGE_LANGUAGE_TABLE.map((r) => r.name).join(', ')} or an alias (${JUDGE_LANGUAGE_TABLE.flatMap((r) => r.aliases).join(', ')})`
  })

/** Schema of a stdin test. */
export const JudgeStdinTestSchema = Type.Object(
  {
    stdin: Type.Optional(Type.String({ default: '', description: 'Standard input of this run' })),
    expected: Type.Optional(
      Type.String({
        description:
          'The output the program must print, as `compare` says; absent: the test passes when the program ends well within its limits'
      })
    )
  },
  { $id: 'JudgeStdinTest', additionalProperties: false }
)

/** Schema of a `call` test (Python, LeetCode style). */
export const JudgeCallTestSchema = Type.Object(
  {
    call: Type.Object(
      {
        function: Type.String({
          minLength: 1,
          maxLength: JUDGE_LIMITS.maxFunctionName,
          description:
            'The function the code defines (at its top level, or a method of its class Solution), called with `args`'
        }),
        args: Type.Array(Type.Unknown(), { description: 'The positional arguments, as JSON values' })
      },
      { additionalProperties: false }
    ),
    expected: Type.Optional(
      Type.Unknown({
        description:
          'The JSON value the call must return (compared as JSON; numbers within the tolerance of {"float": …}); absent: the test passes when the call returns'
      })
    )
  },
  { $id: 'JudgeCallTest', additionalProperties: false }
)

/** One test. */
export type JudgeTest = Static<typeof JudgeStdinTestSchema> | Static<typeof JudgeCallTestSchema>

/** Schema of the APPS/TACO/verl form of a problem's tests. */
export const JudgeInputOutputSchema = Type.Object(
  {
    inputs: Type.Array(Type.Unknown(), {
      maxItems: JUDGE_LIMITS.maxTests,
      description:
        "Each test's standard input (a string, or lines), or, with fn_name, its arguments (an array of JSON values)"
    }),
    outputs: Type.Array(Type.Unknown(), {
      maxItems: JUDGE_LIMITS.maxTests,
      description:
        "Each test's expected output (a string, or lines), or, with fn_name, the return value (a value, or an array whose first item is it)"
    }),
    fn_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: JUDGE_LIMITS.maxFunctionName,
        description: 'Call this function with each input instead of running the program on it (Python)'
      })
    )
  },
  { $id: 'JudgeInputOutput', additionalProperties: false }
)

/** Schema of `compare`. */
export const JudgeCompareSchema = Type.Union(
  [
    Type.Literal('lines', {
      description: 'Equal line by line: trailing whitespace of each line and trailing blank lines ignored, CRLF = LF'
    }),
    Type.Literal('exact', { description: 'Byte for byte' }),
    Type.Literal('tokens', { description: 'Equal as whitespace-separated tokens' }),
    Type.Object(
      {
        float: Type.Number({
          minimum: 0,
          maximum: JUDGE_LIMITS.maxFloatTolerance,
          description: 'Tokens equal, numbers within this absolute or relative tolerance'
        })
      },
      { additionalProperties: false }
    ),
    Type.Object(
      {
        checker: Type.Object(
          {
            language: LanguageSchema('Its language (python, cpp or c)'),
            code: Type.String({
              description:
                'Run as `checker INPUT OUTPUT ANSWER` (three file paths) after each test: exit 0 accepts the output'
            })
          },
          { additionalProperties: false }
        )
      },
      { additionalProperties: false }
    )
  ],
  {
    $id: 'JudgeCompare',
    default: 'lines',
    description:
      'How output is held against the expected one: lines (default), exact, tokens, {"float": tolerance}, or {"checker": {language, code}}'
  }
)

/** How the output is compared. */
export type JudgeCompare = Static<typeof JudgeCompareSchema>

/** Schema of {@link JudgeRequest}. */
export const JudgeRequestSchema = Type.Object(
  {
    language: Type.Optional(LanguageSchema("The program's language (default python)")),
    code: Type.String({ description: 'The program' }),
    tests: Type.Optional(
      Type.Array(Type.Union([JudgeStdinTestSchema, JudgeCallTestSchema]), {
        minItems: 1,
        maxItems: JUDGE_LIMITS.maxTests,
        description:
          'The tests, in order: {stdin, expected} (the program reads stdin and prints), or {call: {function, args}, expected} (Python: the function returns)'
      })
    ),
    input_output: Type.Optional(JudgeInputOutputSchema),
    compare: Type.Optional(JudgeCompareSchema),
    run_all: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Run every test; by default the first failing test stops the judge and the rest are skipped'
      })
    ),
    timeout_ms: boundedInteger(
      LIMITS.minTimeoutMs,
      LIMITS.maxTimeoutMs,
      JUDGE_LIMITS.defaultTimeoutMs,
      'Wall-clock limit of each test, in milliseconds'
    ),
    memory_mb: boundedInteger(
      LIMITS.minMemoryMb,
      LIMITS.maxMemoryMb,
      JUDGE_LIMITS.defaultMemoryMb,
      'Memory each test may allocate, in MiB'
    ),
    compile_timeout_ms: boundedInteger(
      LIMITS.minTimeoutMs,
      LIMITS.maxTimeoutMs,
      JUDGE_LIMITS.defaultCompileTimeoutMs,
      'Wall-clock limit of the compile step, in milliseconds'
    ),
    isolation: Type.Optional(
      literals(ISOLATION_LEVELS, {
        description:
          "How each Python test is kept from the others (process and docker backends): fork or reuse, as an ExecRequest's. Default: the runner's isolation setting. Compiled programs and checkers always run forked"
      })
    ),
    request_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: "Caller's id, echoed in the result and the logs" })
    )
  },
  {
    $id: 'JudgeRequest',
    additionalProperties: false,
    examples: [
      {
        language: 'python',
        code: 'a, b = map(int, input().split())\nprint(a + b)\n',
        tests: [
          { stdin: '1 2\n', expected: '3\n' },
          { stdin: '2 2\n', expected: '4\n' }
        ]
      }
    ]
  }
)

/** A program and its tests, as the caller sends them. */
export type JudgeRequest = Static<typeof JudgeRequestSchema>

/** What a test's output is held against: text (stdin tests), or a JSON value (`call` tests). */
export type JudgeExpected =
  | { readonly text: string }
  /** `or`: a second value also accepted (APPS: an output given as `[value]` accepts `value`). */
  | { readonly json: unknown; readonly or?: unknown }

/** One test, resolved. */
export interface ResolvedJudgeTest {
  /** Standard input ('' for a call). */
  readonly stdin: string
  /** The call of a `call` test. */
  readonly call?: { readonly function: string; readonly args: readonly unknown[] }
  /** Absent: the test passes when the program ends well within its limits. */
  readonly expected?: JudgeExpected
}

/** `compare`, resolved. */
export type ResolvedCompare =
  | { readonly kind: 'lines' | 'exact' | 'tokens' }
  | { readonly kind: 'float'; readonly tolerance: number }
  | { readonly kind: 'checker'; readonly language: JudgeLanguage; readonly code: string }

/** A {@link JudgeRequest} with its defaults applied and its tests in one form. */
export interface ResolvedJudgeRequest {
  readonly language: JudgeLanguage
  readonly code: string
  readonly tests: readonly ResolvedJudgeTest[]
  readonly compare: ResolvedCompare
  readonly run_all: boolean
  readonly timeout_ms: number
  readonly memory_mb: number
  readonly compile_timeout_ms: number
  readonly isolation: IsolationLevel
  readonly request_id?: string
}

/** A judge request the contract refuses beyond its schema: the field at fault and why. */
export interface JudgeRequestProblem {
  /** The field, as a JSON path without the leading slash (`input_output/outputs`, `tests/3/call`). */
  readonly field: string
  readonly message: string
}

/** The stdin or expected text of an `input_output` item: a string, or lines (joined, each ended by a newline). */
function textOf(item: unknown): string | undefined {
  if (typeof item === 'string') return item
  if (Array.isArray(item) && item.every((l) => typeof l === 'string')) return item.map((l) => `${l}\n`).join('')
  return undefined
}

/**
 * The first reason the contract refuses `request` beyond its schema (which it has passed), or undefined: neither or
 * both of `tests` and `input_output`; `inputs` and `outputs` of different lengths, or items of the wrong kind; a `call`
 * test, or `fn_name`, outside Python; a checker in a language that cannot check.
 */
export function judgeRequestProblem(request: JudgeRequest): JudgeRequestProblem | undefined {
  const row = judgeLanguageRow(request.language ?? 'python')
  if (row === undefined) return { field: 'language', message: `unknown language ${String(request.language)}` }
  const { tests, input_output: io } = request
  if (tests === undefined && io === undefined) return { field: 'tests', message: 'give tests or input_output' }
  if (tests !== undefined && io !== undefined)
    return { field: 'input_output', message: 'give tests or input_output, not both' }
  if (tests !== undefined) {
    for (let i = 0; i < tests.length; i++)
      if ('call' in tests[i] && row.runtime !== 'python')
        return { field: `tests/${i}/call`, message: `call tests are Python's; ${row.name} programs read stdin` }
  } else if (io !== undefined) {
    if (io.inputs.length !== io.outputs.length)
      return {
        field: 'input_output/outputs',
        message: `${io.outputs.length} outputs for ${io.inputs.length} inputs`
      }
    if (io.inputs.length === 0) return { field: 'input_output/inputs', message: 'no tests' }
    if (io.fn_name !== undefined && row.runtime !== 'python')
      return { field: 'input_output/fn_name', message: `fn_name calls are Python's; ${row.name} programs read stdin` }
    for (let i = 0; i < io.inputs.length; i++) {
      if (io.fn_name !== undefined) {
        if (!Array.isArray(io.inputs[i]))
          return { field: `input_output/inputs/${i}`, message: 'with fn_name, an input is the array of arguments' }
      } else {
        if (textOf(io.inputs[i]) === undefined)
          return { field: `input_output/inputs/${i}`, message: 'an input is a string or an array of lines' }
        if (textOf(io.outputs[i]) === undefined)
          return { field: `input_output/outputs/${i}`, message: 'an output is a string or an array of lines' }
      }
    }
  }
  const compare = request.compare
  if (typeof compare === 'object' && 'checker' in compare) {
    const checker = judgeLanguageRow(compare.checker.language)
    if (checker === undefined || checker.runtime === 'javascript' || row.runtime === 'javascript')
      return {
        field: 'compare/checker/language',
        message: 'a checker runs beside the program in its sandbox: python, cpp or c, for a python, cpp or c program'
      }
  }
  return undefined
}

/** What a runner decides for a request that leaves it out. */
export interface JudgeDefaults {
  /** The level of a request without `isolation` (the contract's: `fork`). */
  isolation?: IsolationLevel
}

/** The tests of a request, in one form. */
function testsOf(request: JudgeRequest): ResolvedJudgeTest[] {
  if (request.tests !== undefined)
    return request.tests.map((t): ResolvedJudgeTest => {
      if ('call' in t) {
        const call = { function: t.call.function, args: t.call.args }
        return 'expected' in t ? { stdin: '', call, expected: { json: t.expected } } : { stdin: '', call }
      }
      return t.expected === undefined
        ? { stdin: t.stdin ?? '' }
        : { stdin: t.stdin ?? '', expected: { text: t.expected } }
    })
  const io = request.input_output as NonNullable<JudgeRequest['input_output']>
  const fn = io.fn_name
  return io.inputs.map((input, i): ResolvedJudgeTest => {
    const output = io.outputs[i]
    if (fn === undefined) return { stdin: textOf(input) ?? '', expected: { text: textOf(output) ?? '' } }
    // APPS and TACO give a call's output as [value] and accept the value itself, or the list.
    const expected: JudgeExpected =
      Array.isArray(output) && output.length > 0 ? { json: output, or: output[0] } : { json: output }
    return { stdin: '', call: { function: fn, args: input as unknown[] }, expected }
  })
}

/** `compare`, resolved. */
function compareOf(compare: JudgeCompare | undefined): ResolvedCompare {
  if (compare === undefined || typeof compare === 'string') return { kind: compare ?? 'lines' }
  if ('float' in compare) return { kind: 'float', tolerance: compare.float }
  const row = judgeLanguageRow(compare.checker.language) as JudgeLanguageRow
  return { kind: 'checker', language: row.name as JudgeLanguage, code: compare.checker.code }
}

/**
 * Applies the contract's defaults, and the runner's, to a request the schema passed and {@link judgeRequestProblem}
 * found nothing in: the language by its name, the tests in one form, `compare` as a kind.
 */
export function resolveJudgeRequest(request: JudgeRequest, defaults: JudgeDefaults = {}): ResolvedJudgeRequest {
  const row = judgeLanguageRow(request.language ?? 'python')
  if (row === undefined) throw new TypeError(`unknown language ${String(request.language)}`)
  const resolved: ResolvedJudgeRequest = {
    language: row.name as JudgeLanguage,
    code: request.code,
    tests: testsOf(request),
    compare: compareOf(request.compare),
    run_all: request.run_all ?? false,
    timeout_ms: request.timeout_ms ?? JUDGE_LIMITS.defaultTimeoutMs,
    memory_mb: request.memory_mb ?? JUDGE_LIMITS.defaultMemoryMb,
    compile_timeout_ms: request.compile_timeout_ms ?? JUDGE_LIMITS.defaultCompileTimeoutMs,
    isolation: request.isolation ?? defaults.isolation ?? 'fork'
  }
  return request.request_id === undefined ? resolved : { ...resolved, request_id: request.request_id }
}

/** A checker's time limit for each test: the test's `timeout_ms`, at least {@link JUDGE_LIMITS.checkerMinTimeoutMs}. */
export function checkerTimeoutMs(timeoutMs: number): number {
  return Math.max(timeoutMs, JUDGE_LIMITS.checkerMinTimeoutMs)
}

/**
 * The longest a judge of `request` (as the caller sends it: defaults are applied here) may run once a sandbox took
 * it, in ms: its compile steps and every test (and the checker's run of each) to its deadline and the soft stop. A
 * caller waiting for a judge (a gateway, a client) waits this plus its queue budget and grace, as it waits `timeout_ms`
 * for an execute.
 */
export function judgeTimeBoundMs(
  request: Pick<JudgeRequest, 'tests' | 'input_output' | 'timeout_ms' | 'compile_timeout_ms' | 'compare'>
): number {
  const timeoutMs = request.timeout_ms ?? JUDGE_LIMITS.defaultTimeoutMs
  const checker = typeof request.compare === 'object' && 'checker' in request.compare
  const tests = request.tests?.length ?? request.input_output?.inputs.length ?? 0
  const perTest = timeoutMs + GRACES.softStopMs + (checker ? checkerTimeoutMs(timeoutMs) + GRACES.softStopMs : 0)
  const compileMs = request.compile_timeout_ms ?? JUDGE_LIMITS.defaultCompileTimeoutMs
  return (checker ? 2 : 1) * (compileMs + GRACES.softStopMs) + tests * perTest
}

/** Schema of {@link JudgeCompileResult}. */
export const JudgeCompileResultSchema = Type.Object(
  {
    status: literals(COMPILE_STATUSES, {
      description: 'ok | error (the compiler refused the code) | time_limit | memory_limit | output_limit'
    }),
    stdout: Type.String(),
    stderr: Type.String({ description: "The compiler's messages (Python: the SyntaxError)" }),
    exit_code: Type.Union([Type.Integer(), Type.Null()], {
      description: "The compiler's exit code; null when it was stopped, or did not run (cached)"
    }),
    duration_ms: Type.Number({
      description: 'How long the compile took (cached: the compile that made the binary, which did not run again)'
    }),
    cpu_ms: Type.Optional(
      Type.Number({ minimum: 0, description: "The compiler's CPU time, user + system (cached: as for duration_ms)" })
    ),
    cached: Type.Boolean({
      description:
        "True when the runner's compile cache answered: the same source compiled before. Its status is the one a compile under this compile_timeout_ms would end with: time_limit when the compile that made the binary took longer"
    })
  },
  { $id: 'JudgeCompileResult', additionalProperties: false }
)

/** How the compile step went. */
export type JudgeCompileResult = Static<typeof JudgeCompileResultSchema>

/** Schema of a test that ran. */
export const JudgeTestResultSchema = Type.Object(
  {
    verdict: literals(
      TEST_VERDICTS.filter((v) => v !== 'skipped'),
      { description: 'accepted | wrong_answer | time_limit | memory_limit | runtime_error | output_limit' }
    ),
    stdout: Type.String({
      description: "What the program printed (the runner's maxOutputBytes of it; `truncated` says when there was more)"
    }),
    stderr: Type.String(),
    exit_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Exit code; null when the program was stopped or killed by a signal'
    }),
    signal: Type.Optional(Type.String({ description: 'The signal that killed it (SIGSEGV, SIGABRT, …)' })),
    duration_ms: Type.Number({ description: 'Run time of this test' }),
    cpu_ms: Type.Optional(Type.Number({ minimum: 0, description: "The test's own CPU time, user + system" })),
    truncated: Type.Optional(
      Type.Object(
        { stdout: Type.Boolean(), stderr: Type.Boolean() },
        { description: 'Present when stdout or stderr was cut for the answer' }
      )
    ),
    returned: Type.Optional(Type.Unknown({ description: "A call test: the function's return value, as JSON" })),
    checker: Type.Optional(
      Type.Object(
        {
          exit_code: Type.Union([Type.Integer(), Type.Null()]),
          stdout: Type.String(),
          stderr: Type.String()
        },
        { description: "The checker's run on this test" }
      )
    ),
    error: Type.Optional(
      Type.Object(
        { type: Type.String(), message: Type.String() },
        { description: 'Why the run failed (its exception, the limit it hit)' }
      )
    )
  },
  { $id: 'JudgeTestResult', additionalProperties: false }
)

/** A test that ran. */
export type JudgeTestResult = Static<typeof JudgeTestResultSchema>

/** Schema of a test that did not run. */
export const JudgeSkippedTestSchema = Type.Object(
  { verdict: Type.Literal('skipped') },
  { $id: 'JudgeSkippedTest', additionalProperties: false }
)

/** Schema of {@link JudgeResult}. */
export const JudgeResultSchema = Type.Object(
  {
    verdict: literals(JUDGE_VERDICTS, {
      description:
        "accepted | wrong_answer | time_limit | memory_limit | runtime_error | compile_error | output_limit (the program: the first failing test's verdict) · overloaded | queue_timeout | infra_error (the fleet: retriable) · invalid_request (the checker failed: nothing said of the program)"
    }),
    passed: Type.Integer({ minimum: 0, description: 'Tests accepted' }),
    total: Type.Integer({ minimum: 0, description: 'Tests given' }),
    language: Type.String({ description: "The program's language, by its name" }),
    compile: Type.Union([JudgeCompileResultSchema, Type.Null()], {
      description: 'The compile step (Python: to bytecode); null when none ran'
    }),
    tests: Type.Array(Type.Union([JudgeTestResultSchema, JudgeSkippedTestSchema]), {
      description: 'One per test, in order (empty when the judge did not run)'
    }),
    error: Type.Optional(
      Type.Object(
        { type: Type.String(), message: Type.String() },
        {
          description:
            "For a fleet verdict or invalid_request: the stable SF_ERR_… code and why; for compile_error: the compiler's status"
        }
      )
    ),
    duration_ms: Type.Number({ description: 'From the sandbox taking the judge to its last test' }),
    queue_ms: Type.Number({ description: 'Time spent waiting for a sandbox' }),
    runner: Type.String({ description: 'Runner that judged it ("" when none did)' }),
    sandbox: Type.String({ description: 'Sandbox that judged it ("" when none did)' }),
    request_id: Type.Optional(Type.String()),
    maybe_ran: Type.Optional(
      Type.Boolean({
        description:
          'On a fleet verdict (overloaded, queue_timeout, infra_error): whether the program may have started. false: it surely did not run, and a retry judges it once; true: it may have run (its answer was lost, or it stalled). Absent on an infra_error: as true'
      })
    )
  },
  { $id: 'JudgeResult', additionalProperties: false }
)

/** The outcome of a judge. */
export type JudgeResult = Static<typeof JudgeResultSchema>

/**
 * Whether the program of a judge answered `result` may have run: always for a verdict on the program, never for
 * `invalid_request`; for a fleet verdict, what its `maybe_ran` says, as {@link mayHaveRun} reads an execute's.
 */
export function judgeMayHaveRun(result: Pick<JudgeResult, 'verdict' | 'maybe_ran'>): boolean {
  switch (result.verdict) {
    case 'invalid_request':
    case 'overloaded':
    case 'queue_timeout':
    case 'infra_error':
      return mayHaveRun({ status: result.verdict, maybe_ran: result.maybe_ran })
    default:
      return true
  }
}

/**
 * The result of a judge that never ran the program (a fleet verdict, or `invalid_request`); `type` is the stable
 * SF_ERR_… code.
 */
export function failedJudgeResult(
  verdict: JudgeVerdict,
  language: string,
  type: string,
  message: string,
  extra: Partial<JudgeResult> = {}
): JudgeResult {
  return {
    verdict,
    passed: 0,
    total: 0,
    language,
    compile: null,
    tests: [],
    error: { type, message },
    duration_ms: 0,
    queue_ms: 0,
    runner: '',
    sandbox: '',
    ...extra
  }
}

/** Schema of {@link JudgeBatchRequest}. */
export const JudgeBatchRequestSchema = Type.Object(
  { requests: Type.Array(JudgeRequestSchema, { minItems: 1, maxItems: LIMITS.maxBatchItems }) },
  { $id: 'JudgeBatchRequest', additionalProperties: false }
)
/** `POST /v1/judge/batch` body. */
export type JudgeBatchRequest = Static<typeof JudgeBatchRequestSchema>

/** Schema of {@link JudgeBatchResponse}. */
export const JudgeBatchResponseSchema = Type.Object(
  { results: Type.Array(JudgeResultSchema) },
  { $id: 'JudgeBatchResponse' }
)
/** `POST /v1/judge/batch` answer: one result per request, in order. */
export type JudgeBatchResponse = Static<typeof JudgeBatchResponseSchema>

/** Schema of {@link JudgeBatchStreamLine}. */
export const JudgeBatchStreamLineSchema = Type.Object(
  { index: Type.Integer({ minimum: 0 }), result: JudgeResultSchema },
  { $id: 'JudgeBatchStreamLine' }
)
/** One line of a streamed judge batch (`Accept: application/x-ndjson`), in completion order. */
export type JudgeBatchStreamLine = Static<typeof JudgeBatchStreamLineSchema>
