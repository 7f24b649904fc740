/**
 * `sandfleet rollout`: a dataset through an inference engine and the fleet. Writes the kept
 * trajectories as JSONL and a summary (accuracy, pass@k, tool-call error ratio, turns, lengths),
 * with a progress bar on stderr.
 *
 * ```sh
 * sandfleet rollout --engine http://127.0.0.1:8000 --model qwen --dataset train.jsonl --n 32 --keep 16
 * ```
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { SandfleetClient } from '@sandfleet/client'
import { CompletionsEngine } from '../engine/openai-completions.ts'
import { RetryingEngine } from '../engine/retrying-engine.ts'
import { SglangEngine } from '../engine/sglang-generate.ts'
import type { ChatMessage, Engine } from '../engine/engine.ts'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import { JsonlWriter } from '../export/jsonl.ts'
import { ADVANTAGE_METHODS, ADVANTAGE_STDS } from '../algo/advantages.ts'
import { ROC_MODES } from '../algo/grpo-roc.ts'
import { FLEET_FAULT_POLICIES, parseDatasetLine, runDataset, type RolloutProgress, type RolloutSummary } from '../rollout/run-dataset.ts'
import { TURN_TEMPLATES } from '../rollout/turn-template.ts'
import { KvScheduler } from '../schedule/kv-scheduler.ts'
import type { ResultStyle } from '../tools/format.ts'
import type { ToolCallFormat } from '../tools/parse.ts'

/** Where the command writes; tests pass their own. */
export interface CommandIo {
  stdout: (text: string) => void
  stderr: { write: (text: string) => void, isTTY?: boolean }
  env: Readonly<Record<string, string | undefined>>
}

const USAGE = `usage: sandfleet rollout --engine URL[,URL…] --model M --dataset FILE.jsonl [flags]   (each flag also as SANDFLEET_<FLAG>)
  --fleet URL               the fleet's gateway (default $SANDFLEET_URL or http://127.0.0.1:8080)
  --n N --keep G            rollouts per prompt and how many GRPO-RoC keeps (default 8 and 8)
  --out FILE                trajectories JSONL (default rollouts.jsonl); --summary FILE (default OUT.summary.json)
  --write-all               also write the rollouts RoC dropped (kept: false)
  --concurrency C           episodes at once (default 64)
  --max-turns T --max-response-tokens B --max-tokens-per-turn M
  --temperature X --top-p X --seed S
  --format hermes|markdown|code  --style rstar2|verl|output-fence  --template chatml|inline
  --tool-timeout-ms MS      --system TEXT|@FILE   --limit N (first N prompts)
  --engine-attempts N       attempts per engine call on connection errors, 429 and 5xx (default 4)
  --engine-api completions|sglang  /v1/completions (vLLM, default) or SGLang's native /generate
  --render-chat chatml      render chat messages here when the engine's /tokenize takes text only
  --kv-capacity TOKENS      KV capacity per engine when several (default: from /metrics)
  --reserve-new-tokens N    KV reserved per turn by the scheduler (default: the turn's max tokens)
  --usage-poll-ms MS        the scheduler also reads each engine's KV usage from /metrics this often
  --roc-mode sample|deterministic   GRPO-RoC's pick: draws (the report, default) or lowest penalty first (the released code)
  --roc-min-negatives K --roc-min-positives K   kept at least when the group has them (default 2 and 2)
  --advantage grpo|dr_grpo  --advantage-std population|unbiased (verl's)
  --fleet-faults rerun|drop an episode whose tool call met a fleet fault: re-run it (default) or leave it out
  --max-reruns N            re-runs of one rollout after fleet faults before it is dropped (default 2)
  --overlong MAX,CACHE      DAPO overlong penalty on the reward   --drop-equal-groups  reject groups with equal rewards before RoC
  --sessions                each episode keeps its Python state across turns in a fleet session
  --api-key K --engine-api-key K   --no-progress`

function num (v: string | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback
  const x = Number(v)
  if (!Number.isFinite(x)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--${name} must be a number, got ${v}`, 400)
  return x
}

/** The value of a flag that takes one of `choices` (undefined when not given). */
function oneOf<T extends string> (v: string | undefined, name: string, choices: readonly T[]): T | undefined {
  if (v === undefined) return undefined
  if (!(choices as readonly string[]).includes(v)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--${name} must be ${choices.join(' or ')}, got ${v}`, 400)
  return v as T
}

function chatml (messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  return messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + (addGenerationPrompt ? '<|im_start|>assistant\n' : '')
}

/** `values` without its undefined entries (options are exact: a key is given or absent). */
function defined<T extends Record<string, unknown>> (values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }
}

/** A progress bar on a TTY, a line every 10% otherwise. */
function progressBar (out: CommandIo['stderr'], started: number): (p: RolloutProgress) => void {
  let lastDecile = -1
  return (p) => {
    const frac = p.total === 0 ? 1 : p.done / p.total
    const acc = p.done - p.failed === 0 ? 0 : p.correct / (p.done - p.failed)
    const text = `rollout [${'#'.repeat(Math.round(frac * 30)).padEnd(30, '.')}] ${p.done}/${p.total} acc ${acc.toFixed(3)} failed ${p.failed} ${((Date.now() - started) / 1000).toFixed(1)}s`
    if (out.isTTY) { out.write(`\r${text}`); if (p.done === p.total) out.write('\n') } else {
      const decile = Math.floor(frac * 10)
      if (decile !== lastDecile) { lastDecile = decile; out.write(text + '\n') }
    }
  }
}

type OptionSpec = Readonly<Record<string, { type: 'string' | 'boolean', multiple?: boolean }>>

/**
 * Flags not given on the command line are read from `SANDFLEET_<FLAG>` (`--max-turns` →
 * `SANDFLEET_MAX_TURNS`; booleans take `1`/`true`; `SANDFLEET_ENGINE` may hold a comma list).
 */
export function withEnvironment<T extends Record<string, unknown>> (values: T, options: OptionSpec, env: Readonly<Record<string, string | undefined>>): T {
  const out: Record<string, unknown> = { ...values }
  for (const [name, spec] of Object.entries(options)) {
    if (name === 'help' || out[name] !== undefined) continue
    const v = env[`SANDFLEET_${name.replace(/-/g, '_').toUpperCase()}`]
    if (v === undefined || v === '') continue
    out[name] = spec.type === 'boolean' ? /^(1|true|yes)$/i.test(v) : spec.multiple ? [v] : v
  }
  return out as T
}

/** Runs the command; resolves with the summary (also written to the summary file and stdout), or undefined after --help. */
export async function rolloutCommand (argv: string[], io: CommandIo = { stdout: (t) => process.stdout.write(t), stderr: process.stderr, env: process.env }): Promise<RolloutSummary | undefined> {
  const options = {
    engine: { type: 'string', multiple: true }, model: { type: 'string' }, dataset: { type: 'string' }, fleet: { type: 'string' },
    n: { type: 'string' }, keep: { type: 'string' }, out: { type: 'string' }, summary: { type: 'string' }, 'write-all': { type: 'boolean' },
    concurrency: { type: 'string' }, 'max-turns': { type: 'string' }, 'max-response-tokens': { type: 'string' }, 'max-tokens-per-turn': { type: 'string' },
    temperature: { type: 'string' }, 'top-p': { type: 'string' }, seed: { type: 'string' },
    format: { type: 'string' }, style: { type: 'string' }, template: { type: 'string' }, 'tool-timeout-ms': { type: 'string' },
    system: { type: 'string' }, limit: { type: 'string' }, 'render-chat': { type: 'string' }, 'engine-api': { type: 'string' }, 'engine-attempts': { type: 'string' }, 'kv-capacity': { type: 'string' }, 'reserve-new-tokens': { type: 'string' }, 'usage-poll-ms': { type: 'string' },
    'api-key': { type: 'string' }, 'engine-api-key': { type: 'string' }, 'no-progress': { type: 'boolean' }, sessions: { type: 'boolean' }, overlong: { type: 'string' }, 'drop-equal-groups': { type: 'boolean' },
    'roc-mode': { type: 'string' }, 'roc-min-negatives': { type: 'string' }, 'roc-min-positives': { type: 'string' }, advantage: { type: 'string' }, 'advantage-std': { type: 'string' }, 'fleet-faults': { type: 'string' }, 'max-reruns': { type: 'string' },
    help: { type: 'boolean' }
  } as const
  const parsed = parseArgs({ args: argv, options, strict: true })
  const values = withEnvironment(parsed.values, options, io.env)
  if (values.help) { io.stdout(USAGE + '\n'); return undefined }
  const engineUrls = (values.engine ?? []).flatMap((e) => e.split(',')).filter((e) => e.length > 0)
  if (engineUrls.length === 0 || values.model === undefined || values.dataset === undefined) {
    throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--engine, --model and --dataset are required\n${USAGE}`, 400)
  }
  const format = (values.format ?? 'hermes') as ToolCallFormat
  if (!['hermes', 'markdown', 'code'].includes(format)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--format must be hermes, markdown or code, got ${format}`, 400)
  const style = (values.style ?? 'rstar2') as ResultStyle
  if (!['rstar2', 'verl', 'output-fence'].includes(style)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--style must be rstar2, verl or output-fence, got ${style}`, 400)
  const templateName = (values.template ?? (format === 'hermes' ? 'chatml' : 'inline')) as keyof typeof TURN_TEMPLATES
  const template = TURN_TEMPLATES[templateName]
  if (template === undefined) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--template must be chatml or inline, got ${templateName}`, 400)
  if (values['render-chat'] !== undefined && values['render-chat'] !== 'chatml') throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, '--render-chat takes chatml', 400)
  const system = values.system?.startsWith('@') ? readFileSync(values.system.slice(1), 'utf8') : values.system
  const n = num(values.n, 'n', 8)
  const keep = num(values.keep, 'keep', n)
  const limit = num(values.limit, 'limit', Infinity)
  const lines = readFileSync(values.dataset, 'utf8').split('\n').map((l, i) => ({ l, i: i + 1 })).filter(({ l }) => l.trim().length > 0)
  const items = lines.slice(0, limit).map(({ l, i }) => parseDatasetLine(l, i, system))
  let overlong: { maxLength: number, cacheLength: number } | undefined
  if (values.overlong !== undefined) {
    const m = /^(\d+),(\d+)$/.exec(values.overlong)
    if (m === null || Number(m[2]) <= 0 || Number(m[2]) > Number(m[1])) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--overlong takes MAX,CACHE with 0 < CACHE ≤ MAX, got ${values.overlong}`, 400)
    overlong = { maxLength: Number(m[1]), cacheLength: Number(m[2]) }
  }
  const algorithm = defined({
    rocMode: oneOf(values['roc-mode'], 'roc-mode', ROC_MODES),
    rocMinNegatives: values['roc-min-negatives'] === undefined ? undefined : num(values['roc-min-negatives'], 'roc-min-negatives', 2),
    rocMinPositives: values['roc-min-positives'] === undefined ? undefined : num(values['roc-min-positives'], 'roc-min-positives', 2),
    advantage: oneOf(values.advantage, 'advantage', ADVANTAGE_METHODS),
    advantageStd: oneOf(values['advantage-std'], 'advantage-std', ADVANTAGE_STDS),
    fleetFaults: oneOf(values['fleet-faults'], 'fleet-faults', FLEET_FAULT_POLICIES),
    maxReruns: values['max-reruns'] === undefined ? undefined : num(values['max-reruns'], 'max-reruns', 2)
  })
  const out = values.out ?? 'rollouts.jsonl'
  const summaryPath = values.summary ?? `${out.replace(/\.jsonl$/, '')}.summary.json`

  const api = values['engine-api'] ?? 'completions'
  if (api !== 'completions' && api !== 'sglang') throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--engine-api must be completions or sglang, got ${api}`, 400)
  const Adapter = api === 'sglang' ? SglangEngine : CompletionsEngine
  const engines = engineUrls.map((url) => new Adapter({
    url,
    model: values.model as string,
    ...(values['engine-api-key'] ? { apiKey: values['engine-api-key'] } : {}),
    ...(values['render-chat'] === 'chatml' ? { renderChat: chatml } : {})
  }))
  let engine: Engine = engines[0]
  const fleet = new SandfleetClient({ url: values.fleet ?? io.env.SANDFLEET_URL ?? 'http://127.0.0.1:8080', ...(values['api-key'] ? { apiKey: values['api-key'] } : {}) })
  const writer = new JsonlWriter(out)
  try {
    if (engines.length > 1) {
      engine = await KvScheduler.create({
        engines,
        ...(values['kv-capacity'] ? { capacityTokens: num(values['kv-capacity'], 'kv-capacity', 0) } : {}),
        ...(values['reserve-new-tokens'] ? { reserveNewTokens: num(values['reserve-new-tokens'], 'reserve-new-tokens', 0) } : {}),
        ...(values['usage-poll-ms'] ? { usagePollMs: num(values['usage-poll-ms'], 'usage-poll-ms', 0) } : {})
      })
    }
    const attempts = num(values['engine-attempts'], 'engine-attempts', 4)
    const policy = attempts > 1 ? new RetryingEngine(engine, { maxAttempts: attempts, baseDelayMs: 200, maxDelayMs: 5000 }) : engine
    const started = Date.now()
    const summary = await runDataset({
      items,
      n,
      keep,
      concurrency: num(values.concurrency, 'concurrency', 64),
      seed: num(values.seed, 'seed', 0),
      writeAll: values['write-all'] === true,
      ...(values.sessions ? { sessions: { client: fleet } } : {}),
      ...(overlong ? { overlong } : {}),
      dropEqualRewardGroups: values['drop-equal-groups'] === true,
      ...algorithm,
      episode: {
        engine: policy,
        fleet,
        format,
        style,
        template,
        maxTurns: num(values['max-turns'], 'max-turns', 10),
        maxResponseTokens: num(values['max-response-tokens'], 'max-response-tokens', 8192),
        ...(values['max-tokens-per-turn'] ? { maxTokensPerTurn: num(values['max-tokens-per-turn'], 'max-tokens-per-turn', 0) } : {}),
        timeoutMs: num(values['tool-timeout-ms'], 'tool-timeout-ms', 5000),
        sampling: {
          temperature: num(values.temperature, 'temperature', 1),
          ...(values['top-p'] ? { topP: num(values['top-p'], 'top-p', 1) } : {}),
          ...(values.seed ? { seed: num(values.seed, 'seed', 0) } : {})
        }
      },
      onRecord: async (r) => { await writer.write(r) },
      ...(values['no-progress'] ? {} : { onProgress: progressBar(io.stderr, started) })
    })
    writeFileSync(summaryPath, JSON.stringify({ ...summary, out, n, keep, model: values.model, engines: engineUrls }, null, 2) + '\n')
    io.stdout(JSON.stringify(summary) + '\n')
    if (summary.rollouts === 0 && summary.failed > 0) throw new TrainerError(TRAINER_ERROR_CODES.ENGINE_CONNECTION, `every rollout failed; first error: ${summary.first_error ?? 'unknown'}`, 502)
    return summary
  } finally {
    await writer.close()
    await engine.close() // a scheduler closes its engines; closing twice is safe
    await Promise.all(engines.map(async (e) => await e.close()))
    await fleet.close()
  }
}
