/**
 * The rStar2 preset end to end against the scripted engine: `sandfleet rollout --preset rstar2`
 * over a two-problem dataset, with an engine that plays an rStar2-style model (it calls
 * `python_code_with_standard_io` with standard input, reads the `<tool_response>`, answers in
 * `<answer>\boxed{}</answer>`; one rollout in four answers wrong) and a fleet: the one at `--fleet
 * URL`, or else the fake fleet of `@sandfleet/client/testing` (python3 behind the public API,
 * unsandboxed). Writes OUT_DIR/rollouts.jsonl, its summary and rollouts.npz, then reads the tensors
 * back with python/sandfleet_tensors.py.
 *
 *     node --import tsx packages/trainer/examples/rstar2-scripted.ts [OUT_DIR] [--fleet URL]
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startFakeFleet, type FakeBehavior } from '@sandfleet/client/testing'
import { rolloutCommand, type RolloutSummary } from '@sandfleet/trainer'
import { startScriptedEngine, type Script, type ScriptedLogEntry } from '@sandfleet/trainer'

/** The scripted model: squares the problem's number with the tool, wrong when its sampling seed is a multiple of 4. */
export const RSTAR2_SCRIPT: Script = (ctx) => {
  const n = /What is (\d+) squared/.exec(ctx.prompt)?.[1] ?? '0'
  const sawTool = ctx.prompt.includes('"name":"python_code_with_standard_io"')
  if (ctx.turn === 0) {
    if (!sawTool) return 'I have no tool. </reason>\n<answer>\\boxed{0}</answer>'
    return ` Square it with the tool.</reason>\n<tool_call>\n{"name": "python_code_with_standard_io", "arguments": {"code": "print(int(input()) ** 2)", "input": "${n}"}}\n</tool_call>`
  }
  const out = /<tool_response>\n(\d+)/.exec(ctx.prompt.slice(ctx.prompt.lastIndexOf('<tool_response>')))?.[1] ?? '?'
  const wrong = Number(ctx.body.seed) % 4 === 0
  return `<reason>The tool printed ${out}.</reason>\n<answer>\\boxed{${wrong ? Number(out) + 1 : out}}</answer>`
}

/** What {@link runRstar2Example} leaves behind. */
export interface ExampleRun {
  summary: RolloutSummary
  dir: string
  /** The engine's requests (the first `/tokenize` carries the tool schema). */
  engineLog: ScriptedLogEntry[]
  /** What python/sandfleet_tensors.py printed about rollouts.npz. */
  tensors: string
}

/**
 * Runs the example into `dir` (the first `problems` of the two); `fleetUrl` names a running fleet, else a fake one runs
 * `behavior`.
 */
export async function runRstar2Example(
  dir: string,
  options: { fleetUrl?: string; behavior?: FakeBehavior; problems?: number; stderr?: (t: string) => void } = {}
): Promise<ExampleRun> {
  mkdirSync(dir, { recursive: true })
  const dataset = join(dir, 'train.jsonl')
  writeFileSync(
    dataset,
    '{"problem": "What is 12 squared?", "answer": "144"}\n{"problem": "What is 7 squared?", "answer": "49"}\n'
  )
  const engine = await startScriptedEngine(RSTAR2_SCRIPT)
  const fake = options.fleetUrl === undefined ? await startFakeFleet(options.behavior) : undefined
  try {
    const summary = (await rolloutCommand(
      [
        '--preset',
        'rstar2',
        '--engine',
        engine.url,
        '--model',
        'scripted',
        '--dataset',
        dataset,
        '--fleet',
        options.fleetUrl ?? (fake as { url: string }).url,
        '--seed',
        '1',
        '--concurrency',
        '16',
        '--tool-timeout-ms',
        '20000',
        '--out',
        join(dir, 'rollouts.jsonl'),
        '--tensors',
        join(dir, 'rollouts.npz'),
        '--no-progress',
        ...(options.problems === undefined ? [] : ['--limit', String(options.problems)])
      ],
      { stdout: () => {}, stderr: { write: options.stderr ?? (() => {}) }, env: {} }
    )) as RolloutSummary
    const reader = new URL('../python/sandfleet_tensors.py', import.meta.url).pathname
    const tensors = execFileSync('python3', [reader, join(dir, 'rollouts.npz')], { encoding: 'utf8' })
    return { summary, dir, engineLog: engine.log, tensors }
  } finally {
    await engine.close()
    await fake?.close()
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--fleet')
  const fleetUrl = at >= 0 ? args.splice(at, 2)[1] : undefined
  const dir = args[0] ?? mkdtempSync(join(tmpdir(), 'sf-rstar2-'))
  const run = await runRstar2Example(dir, fleetUrl === undefined ? {} : { fleetUrl })
  const { summary } = run
  console.log(
    `${dir}: ${summary.rollouts} rollouts, ${summary.kept} kept, accuracy ${summary.accuracy}, pass@1 ${summary.pass_at_k[1]}, tool calls ${summary.tool_calls} (error ratio ${summary.tool_error_ratio}), turns ${summary.turns_mean}, stops ${JSON.stringify(summary.stop_reasons)}`
  )
  process.stdout.write(run.tensors)
}
