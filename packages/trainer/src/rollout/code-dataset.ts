/**
 * The tests of a code problem, read from a dataset line in the forms code RL datasets publish them:
 *
 * - APPS and TACO (and verl's code datasets): `input_output`, an object or its JSON text, `{inputs, outputs}` with
 *   `fn_name` for a function's tests (TACO's `fn_name` may also stand beside it); a `reward_model.ground_truth` that
 *   holds one (verl's parquet rows);
 * - LiveCodeBench: `public_test_cases` and `private_test_cases` (lists, or their JSON text) of
 *   `{input, output, testtype: "stdin" | "functional"}`, the function's name in `metadata.func_name`;
 * - sandfleet's own: `tests` as `/v1/judge` takes them.
 *
 * `language` (default python), `time_limit` (seconds; TACO gives it) and `memory_limit` (MiB) go with them. A line
 * with none of these has no code tests (a math item).
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { CodeTests } from '../reward/code-reward.ts'

/** `value`, or the JSON it holds when it is text. */
function parsed(value: unknown, field: string, lineNo: number): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch (err) {
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `dataset line ${lineNo}: ${field} is text that is not JSON (${(err as Error).message}); LiveCodeBench's compressed private tests must be decompressed first`,
      400
    )
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** LiveCodeBench's test cases → the APPS form (a functional test's input is one JSON value a line: the arguments). */
function fromLiveCodeBench(cases: unknown[], fnName: string | undefined, lineNo: number): CodeTests['input_output'] {
  const inputs: unknown[] = []
  const outputs: unknown[] = []
  for (const c of cases) {
    if (!isRecord(c) || typeof c.input !== 'string' || typeof c.output !== 'string')
      throw new TrainerError(
        TRAINER_ERROR_CODES.BAD_INPUT,
        `dataset line ${lineNo}: a test case needs "input" and "output" strings`,
        400
      )
    if (c.testtype === 'functional') {
      if (fnName === undefined)
        throw new TrainerError(
          TRAINER_ERROR_CODES.BAD_INPUT,
          `dataset line ${lineNo}: a functional test case needs metadata.func_name`,
          400
        )
      inputs.push(
        c.input
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => parsed(l, 'a functional input', lineNo))
      )
      outputs.push(parsed(c.output, 'a functional output', lineNo))
    } else {
      inputs.push(c.input)
      outputs.push(c.output)
    }
  }
  const functional = cases.some((c) => isRecord(c) && c.testtype === 'functional')
  return functional && fnName !== undefined ? { inputs, outputs, fn_name: fnName } : { inputs, outputs }
}

/** The code tests of a dataset line's object, or undefined when it has none (see the module comment). */
export function codeTestsOf(v: Record<string, unknown>, lineNo: number): CodeTests | undefined {
  let io: unknown
  let tests: unknown
  const rewardModel = isRecord(v.reward_model) ? v.reward_model : undefined
  if (v.input_output !== undefined) io = parsed(v.input_output, 'input_output', lineNo)
  else if (v.public_test_cases !== undefined || v.private_test_cases !== undefined) {
    const cases = [
      ...((parsed(v.public_test_cases ?? [], 'public_test_cases', lineNo) as unknown[] | undefined) ?? []),
      ...((parsed(v.private_test_cases ?? [], 'private_test_cases', lineNo) as unknown[] | undefined) ?? [])
    ]
    const metadata = parsed(v.metadata ?? {}, 'metadata', lineNo)
    const fnName = isRecord(metadata) && typeof metadata.func_name === 'string' ? metadata.func_name : undefined
    io = fromLiveCodeBench(cases, fnName, lineNo)
  } else if (Array.isArray(v.tests)) tests = v.tests
  else if (rewardModel !== undefined && rewardModel.ground_truth !== undefined) {
    const truth = parsed(rewardModel.ground_truth, 'reward_model.ground_truth', lineNo)
    if (isRecord(truth) && Array.isArray(truth.inputs)) io = truth
    else return undefined
  } else return undefined
  const out: CodeTests = {}
  if (io !== undefined) {
    if (!isRecord(io) || !Array.isArray(io.inputs) || !Array.isArray(io.outputs))
      throw new TrainerError(
        TRAINER_ERROR_CODES.BAD_INPUT,
        `dataset line ${lineNo}: input_output needs "inputs" and "outputs" lists`,
        400
      )
    const fnName = typeof io.fn_name === 'string' ? io.fn_name : typeof v.fn_name === 'string' ? v.fn_name : undefined
    out.input_output = {
      inputs: io.inputs,
      outputs: io.outputs,
      ...(fnName === undefined ? {} : { fn_name: fnName })
    }
  } else out.tests = tests as CodeTests['tests']
  if (typeof v.language === 'string') out.language = v.language
  const timeLimit = typeof v.time_limit === 'string' ? Number.parseFloat(v.time_limit) : v.time_limit
  if (typeof timeLimit === 'number' && Number.isFinite(timeLimit) && timeLimit > 0)
    out.timeout_ms = Math.round(timeLimit * 1000)
  if (typeof v.memory_limit === 'number' && v.memory_limit > 0) out.memory_mb = Math.round(v.memory_limit)
  return out
}
