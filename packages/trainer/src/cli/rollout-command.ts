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
import { SandfleetClient } from '@sandfleet/client'
import { commandHelp, defineCommand, parseCommandLine } from '@sandfleet/protocol'
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

/** The command's flags; each also a `SANDFLEET_<FLAG>` variable (`--max-turns` → `SANDFLEET_MAX_TURNS`). */
export const ROLLOUT_COMMAND = defineCommand({
  name: 'sandfleet rollout',
  summary: 'Multi-turn rollouts of a dataset through an inference engine and the fleet, written as JSONL with a summary. Needs --engine, --model and --dataset.',
  flags: {
    engine: { type: 'list', placeholder: 'URL[,URL…]', help: 'inference engine(s); repeat or separate with commas' },
    model: { type: 'string', placeholder: 'M', help: 'model name sent to the engine' },
    dataset: { type: 'string', placeholder: 'FILE.jsonl', help: 'prompts, one JSON object a line' },
    fleet: { type: 'string', env: 'SANDFLEET_URL', placeholder: 'URL', help: "the fleet's gateway (default http://127.0.0.1:8080)" },
    n: { type: 'string', placeholder: 'N', help: 'rollouts per prompt (default 8)' },
    keep: { type: 'string', placeholder: 'G', help: 'how many of them GRPO-RoC keeps (default: n)' },
    out: { type: 'string', placeholder: 'FILE', help: 'trajectories JSONL (default rollouts.jsonl)' },
    summary: { type: 'string', placeholder: 'FILE', help: 'summary JSON (default OUT.summary.json)' },
    'write-all': { type: 'boolean', help: 'also write the rollouts RoC dropped (kept: false)' },
    concurrency: { type: 'string', placeholder: 'C', help: 'episodes at once (default 64)' },
    'max-turns': { type: 'string', placeholder: 'T', help: 'turns per episode (default 10)' },
    'max-response-tokens': { type: 'string', placeholder: 'B', help: 'response tokens per episode (default 8192)' },
    'max-tokens-per-turn': { type: 'string', placeholder: 'M', help: 'tokens per turn' },
    temperature: { type: 'string', placeholder: 'X', help: 'sampling temperature (default 1)' },
    'top-p': { type: 'string', placeholder: 'X', help: 'nucleus sampling' },
    seed: { type: 'string', placeholder: 'S', help: 'seed of the sampling and the scheduler (default 0)' },
    format: { type: 'string', choices: ['hermes', 'markdown', 'code'], help: 'tool-call format (default hermes)' },
    style: { type: 'string', choices: ['rstar2', 'verl', 'output-fence'], help: 'tool-result style (default rstar2)' },
    template: { type: 'string', choices: ['chatml', 'inline'], help: 'turn template (default chatml for hermes, else inline)' },
    'tool-timeout-ms': { type: 'string', placeholder: 'MS', help: 'timeout of each tool call (default 5000)' },
    system: { type: 'string', placeholder: 'TEXT|@FILE', help: 'system prompt' },
    limit: { type: 'string', placeholder: 'N', help: 'first N prompts only' },
    'engine-attempts': { type: 'string', placeholder: 'N', help: 'attempts per engine call on connection errors, 429 and 5xx (default 4)' },
    'engine-api': { type: 'string', choices: ['completions', 'sglang'], help: "/v1/completions (vLLM, default) or SGLang's native /generate" },
    'render-chat': { type: 'string', choices: ['chatml'], help: "render chat messages here when the engine's /tokenize takes text only" },
    'kv-capacity': { type: 'string', placeholder: 'TOKENS', help: 'KV capacity per engine when several (default: from /metrics)' },
    'reserve-new-tokens': { type: 'string', placeholder: 'N', help: "KV reserved per turn by the scheduler (default: the turn's max tokens)" },
    'usage-poll-ms': { type: 'string', placeholder: 'MS', help: "the scheduler also reads each engine's KV usage from /metrics this often" },
    'roc-mode': { type: 'string', choices: ['sample', 'deterministic'], help: "GRPO-RoC's pick: draws (the report, default) or lowest penalty first (the released code)" },
    'roc-min-negatives': { type: 'string', placeholder: 'K', help: 'negatives kept at least when the group has them (default 2)' },
    'roc-min-positives': { type: 'string', placeholder: 'K', help: 'positives kept at least when the group has them (default 2)' },
    advantage: { type: 'string', choices: ['grpo', 'dr_grpo'], help: 'advantage estimator (default grpo)' },
    'advantage-std': { type: 'string', choices: ['population', 'unbiased'], help: "standard deviation of the group (verl's: unbiased)" },
    'fleet-faults': { type: 'string', choices: ['rerun', 'drop'], help: 'an episode whose tool call met a fleet fault: re-run it (default) or leave it out' },
    'max-reruns': { type: 'string', placeholder: 'N', help: 're-runs of one rollout after fleet faults before it is dropped (default 2)' },
    overlong: { type: 'string', placeholder: 'MAX,CACHE', help: 'DAPO overlong penalty on the reward' },
    'drop-equal-groups': { type: 'boolean', help: 'reject groups with equal rewards before RoC' },
    sessions: { type: 'boolean', help: 'each episode keeps its Python state across turns in a fleet session' },
    'api-key': { type: 'string', placeholder: 'K', help: "the fleet's API key" },
    'engine-api-key': { type: 'string', placeholder: 'K', help: "the engine's API key" },
    'no-progress': { type: 'boolean', help: 'no progress bar on stderr' }
  }
})

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

/** Runs the command; resolves with the summary (also written to the summary file and stdout), or undefined after --help. */
export async function rolloutCommand (argv: string[], io: CommandIo = { stdout: (t) => process.stdout.write(t), stderr: process.stderr, env: process.env }): Promise<RolloutSummary | undefined> {
  const { values, help } = parseCommandLine(ROLLOUT_COMMAND, argv, io.env)
  if (help) { io.stdout(commandHelp(ROLLOUT_COMMAND) + '\n'); return undefined }
  const engineUrls = (values.engine ?? []).flatMap((e) => e.split(',')).filter((e) => e.length > 0)
  if (engineUrls.length === 0 || values.model === undefined || values.dataset === undefined) {
    throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--engine, --model and --dataset are required\n${commandHelp(ROLLOUT_COMMAND)}`, 400)
  }
  const format = (values.format ?? 'hermes') as ToolCallFormat
  if (!['hermes', 'markdown', 'code'].includes(format)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--format must be hermes, markdown or code, got ${format}`, 400)
  const style = (values.style ?? 'rstar2') as ResultStyle
  if (!['rstar2', 'verl', 'output-fence'].includes(style)) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--style must be rstar2, verl or output-fence, got ${style}`, 400)
  const templateName = (values.template ?? (format === 'hermes' ? 'chatml' : 'inline')) as keyof typeof TURN_TEMPLATES
  const template = TURN_TEMPLATES[templateName]
  if (template === undefined) throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--template must be chatml or inline, got ${templateName}`, 400)
  if (values.renderChat !== undefined && values.renderChat !== 'chatml') throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, '--render-chat takes chatml', 400)
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
    rocMode: oneOf(values.rocMode, 'roc-mode', ROC_MODES),
    rocMinNegatives: values.rocMinNegatives === undefined ? undefined : num(values.rocMinNegatives, 'roc-min-negatives', 2),
    rocMinPositives: values.rocMinPositives === undefined ? undefined : num(values.rocMinPositives, 'roc-min-positives', 2),
    advantage: oneOf(values.advantage, 'advantage', ADVANTAGE_METHODS),
    advantageStd: oneOf(values.advantageStd, 'advantage-std', ADVANTAGE_STDS),
    fleetFaults: oneOf(values.fleetFaults, 'fleet-faults', FLEET_FAULT_POLICIES),
    maxReruns: values.maxReruns === undefined ? undefined : num(values.maxReruns, 'max-reruns', 2)
  })
  const out = values.out ?? 'rollouts.jsonl'
  const summaryPath = values.summary ?? `${out.replace(/\.jsonl$/, '')}.summary.json`

  const api = values.engineApi ?? 'completions'
  if (api !== 'completions' && api !== 'sglang') throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, `--engine-api must be completions or sglang, got ${api}`, 400)
  const Adapter = api === 'sglang' ? SglangEngine : CompletionsEngine
  const engines = engineUrls.map((url) => new Adapter({
    url,
    model: values.model as string,
    ...(values.engineApiKey ? { apiKey: values.engineApiKey } : {}),
    ...(values.renderChat === 'chatml' ? { renderChat: chatml } : {})
  }))
  let engine: Engine = engines[0]
  const fleet = new SandfleetClient({ url: values.fleet ?? 'http://127.0.0.1:8080', ...(values.apiKey ? { apiKey: values.apiKey } : {}) })
  const writer = new JsonlWriter(out)
  try {
    if (engines.length > 1) {
      engine = await KvScheduler.create({
        engines,
        ...(values.kvCapacity ? { capacityTokens: num(values.kvCapacity, 'kv-capacity', 0) } : {}),
        ...(values.reserveNewTokens ? { reserveNewTokens: num(values.reserveNewTokens, 'reserve-new-tokens', 0) } : {}),
        ...(values.usagePollMs ? { usagePollMs: num(values.usagePollMs, 'usage-poll-ms', 0) } : {})
      })
    }
    const attempts = num(values.engineAttempts, 'engine-attempts', 4)
    const policy = attempts > 1 ? new RetryingEngine(engine, { maxAttempts: attempts, baseDelayMs: 200, maxDelayMs: 5000 }) : engine
    const started = Date.now()
    const summary = await runDataset({
      items,
      n,
      keep,
      concurrency: num(values.concurrency, 'concurrency', 64),
      seed: num(values.seed, 'seed', 0),
      writeAll: values.writeAll === true,
      ...(values.sessions ? { sessions: { client: fleet } } : {}),
      ...(overlong ? { overlong } : {}),
      dropEqualRewardGroups: values.dropEqualGroups === true,
      ...algorithm,
      episode: {
        engine: policy,
        fleet,
        format,
        style,
        template,
        maxTurns: num(values.maxTurns, 'max-turns', 10),
        maxResponseTokens: num(values.maxResponseTokens, 'max-response-tokens', 8192),
        ...(values.maxTokensPerTurn ? { maxTokensPerTurn: num(values.maxTokensPerTurn, 'max-tokens-per-turn', 0) } : {}),
        timeoutMs: num(values.toolTimeoutMs, 'tool-timeout-ms', 5000),
        sampling: {
          temperature: num(values.temperature, 'temperature', 1),
          ...(values.topP ? { topP: num(values.topP, 'top-p', 1) } : {}),
          ...(values.seed ? { seed: num(values.seed, 'seed', 0) } : {})
        }
      },
      onRecord: async (r) => { await writer.write(r) },
      ...(values.noProgress ? {} : { onProgress: progressBar(io.stderr, started) })
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
