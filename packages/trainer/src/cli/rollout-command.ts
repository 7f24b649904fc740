/**
 * `sandfleet rollout`: a dataset through an inference engine and the fleet. Writes the kept
 * trajectories as JSONL (and, with `--tensors`, as padded tensors in an `.npz`) and a summary
 * (accuracy, pass@k, tool-call error ratio, turns, lengths), with a progress bar on stderr.
 * `--preset` starts from {@link ROLLOUT_PRESETS}; each flag given overrides its field.
 *
 * ```sh
 * sandfleet rollout --preset rstar2 --engine http://127.0.0.1:8000 --model qwen --dataset train.jsonl
 * sandfleet rollout --engine scripted --dataset packages/trainer/examples/arithmetic.jsonl   # no GPU: a scripted model
 * ```
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { SandfleetClient } from '@sandfleet/client'
import { type IsolationLevel } from '@sandfleet/protocol'
import { commandHelp, defineCommand, parseCommandLine } from '@sandfleet/command-line'
import { ADVANTAGE_METHODS, ADVANTAGE_STDS, type AdvantageMethod, type AdvantageStd } from '../algo/advantages.ts'
import { ROC_MODES, type RocMode } from '../algo/grpo-roc.ts'
import { ERROR_COUNT_RULES, type ErrorCountRule } from '../algo/roc-penalties.ts'
import { renderChatml } from '../engine/chatml.ts'
import { CompletionsEngine } from '../engine/openai-completions.ts'
import { RetryingEngine } from '../engine/retrying-engine.ts'
import { arithmeticModel } from '../engine/arithmetic-model.ts'
import { startScriptedEngine, type ScriptedEngine } from '../engine/scripted-engine.ts'
import { SglangEngine } from '../engine/sglang-generate.ts'
import type { Engine } from '../engine/engine.ts'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import { JsonlWriter } from '../export/jsonl.ts'
import { writeTensors, type TensorRecord } from '../export/tensors.ts'
import { ROLLOUT_PRESETS, type PresetName } from '../rollout/presets.ts'
import {
  FLEET_FAULT_POLICIES,
  parseDatasetLine,
  runDataset,
  type FleetFaultPolicy,
  type RolloutProgress,
  type RolloutSummary
} from '../rollout/run-dataset.ts'
import { TURN_TEMPLATES } from '../rollout/turn-template.ts'
import { KvScheduler } from '../schedule/kv-scheduler.ts'
import { SCHEDULE_POLICIES, type SchedulePolicy } from '../schedule/pick-engine.ts'
import { TRUNCATE_SIDES, type ResultStyle, type TruncateSide } from '../tools/format.ts'
import type { ToolCallFormat } from '../tools/parse.ts'

/** The `--engine` value that starts a scripted engine (arithmetic-model.ts) in the command's process. */
export const SCRIPTED_ENGINE = 'scripted'

/** Where the command writes; tests pass their own. */
export interface CommandIo {
  stdout: (text: string) => void
  stderr: { write: (text: string) => void; isTTY?: boolean }
  env: Readonly<Record<string, string | undefined>>
}

/** The command's flags; each also a `SANDFLEET_<FLAG>` variable (`--max-turns` → `SANDFLEET_MAX_TURNS`). */
export const ROLLOUT_COMMAND = defineCommand({
  name: 'sandfleet rollout',
  summary:
    'Multi-turn rollouts of a dataset through an inference engine and the fleet, written as JSONL with a summary (and as padded tensors with --tensors). Needs --engine, --model and --dataset (--engine scripted: no model, no GPU).',
  flags: {
    engine: {
      type: 'list',
      placeholder: 'URL[,URL…]',
      help: "inference engine(s); repeat or separate with commas. `scripted`: a scripted model started here that solves a problem's arithmetic with the tool (try a rollout without a GPU)"
    },
    model: { type: 'string', placeholder: 'M', help: 'model name sent to the engine (--engine scripted: scripted)' },
    dataset: { type: 'string', placeholder: 'FILE.jsonl', help: 'prompts, one JSON object a line' },
    preset: {
      type: 'string',
      choices: Object.keys(ROLLOUT_PRESETS),
      help: 'start from named settings (rstar2: rStar2-Agent as its released recipe runs); the flags given override them'
    },
    fleet: {
      type: 'string',
      env: 'SANDFLEET_URL',
      placeholder: 'URL',
      help: "the fleet's gateway (default http://127.0.0.1:8080)"
    },
    n: { type: 'integer', min: 1, placeholder: 'N', help: 'rollouts per prompt (default 8; rstar2 32)' },
    keep: {
      type: 'integer',
      min: 1,
      placeholder: 'G',
      help: 'how many of them GRPO-RoC keeps (default: n, RoC off; rstar2 16)'
    },
    out: { type: 'string', placeholder: 'FILE', help: 'trajectories JSONL (default rollouts.jsonl)' },
    summary: { type: 'string', placeholder: 'FILE', help: 'summary JSON (default OUT.summary.json)' },
    tensors: {
      type: 'string',
      placeholder: 'FILE.npz',
      help: 'also the kept rollouts as padded tensors for verl/OpenRLHF (python/sandfleet_tensors.py reads them)'
    },
    'pad-token-id': {
      type: 'integer',
      min: 0,
      placeholder: 'ID',
      help: 'the id padding the tensors (default 0; the attention mask marks it)'
    },
    'write-all': { type: 'boolean', help: 'also write the rollouts RoC dropped (kept: false)' },
    concurrency: { type: 'integer', min: 1, placeholder: 'C', help: 'episodes at once (default 64)' },
    'max-turns': {
      type: 'integer',
      min: 1,
      placeholder: 'T',
      help: 'assistant turns per episode (default 10; rstar2 5)'
    },
    'max-response-tokens': {
      type: 'integer',
      min: 1,
      placeholder: 'B',
      help: 'response tokens per episode (default 8192)'
    },
    'max-tokens-per-turn': { type: 'integer', min: 1, placeholder: 'M', help: 'tokens per turn' },
    'max-parallel-calls': {
      type: 'integer',
      min: 1,
      placeholder: 'N',
      help: "tool calls run per turn, verl's max_parallel_calls (default 1: the turn stops at its first </tool_call>)"
    },
    'max-tool-response-length': {
      type: 'integer',
      min: 1,
      placeholder: 'CHARS',
      help: 'characters of one tool result the model sees (default 2000; rstar2 256)'
    },
    'tool-response-truncate-side': {
      type: 'string',
      choices: TRUNCATE_SIDES,
      help: 'the side of a long result kept, as verl names it: left the start, right the end, middle both ends (default middle)'
    },
    temperature: { type: 'number', min: 0, placeholder: 'X', help: 'sampling temperature (default 1)' },
    'top-p': { type: 'number', min: 0, placeholder: 'X', help: 'nucleus sampling' },
    seed: {
      type: 'integer',
      placeholder: 'S',
      help: "seed of the sampling (one per rollout, derived) and of RoC's draws (default 0)"
    },
    format: { type: 'string', choices: ['hermes', 'markdown', 'code'], help: 'tool-call format (default hermes)' },
    style: { type: 'string', choices: ['rstar2', 'verl', 'output-fence'], help: 'tool-result style (default rstar2)' },
    template: {
      type: 'string',
      choices: ['chatml', 'inline'],
      help: 'turn template (default chatml for hermes, else inline)'
    },
    'tool-timeout-ms': { type: 'integer', min: 1, placeholder: 'MS', help: 'timeout of each tool call (default 5000)' },
    isolation: {
      type: 'string',
      choices: ['fork', 'reuse'],
      help: "isolation level of each tool call (default: the fleet runner's)"
    },
    system: { type: 'string', placeholder: 'TEXT|@FILE', help: 'system prompt' },
    'user-template': {
      type: 'string',
      placeholder: 'TEXT|@FILE',
      help: 'each user turn, {problem} replaced by its text'
    },
    limit: { type: 'integer', min: 0, placeholder: 'N', help: 'first N prompts only' },
    'engine-attempts': {
      type: 'integer',
      min: 1,
      placeholder: 'N',
      help: 'attempts per engine call on connection errors, 429 and 5xx (default 4)'
    },
    'engine-api': {
      type: 'string',
      choices: ['completions', 'sglang'],
      help: "/v1/completions (vLLM, default) or SGLang's native /generate"
    },
    'render-chat': {
      type: 'string',
      choices: ['chatml'],
      help: "render chat messages (and tool schemas) here when the engine's /tokenize takes text only"
    },
    schedule: {
      type: 'string',
      choices: SCHEDULE_POLICIES,
      help: "how turns are spread over several engines: fewest in flight (least_requests, default), most free KV (kv, the report's §3.2), round_robin"
    },
    'kv-capacity': {
      type: 'integer',
      min: 1,
      placeholder: 'TOKENS',
      help: 'KV capacity per engine, for --schedule kv (default: from /metrics)'
    },
    'reserve-new-tokens': {
      type: 'integer',
      min: 1,
      placeholder: 'N',
      help: "KV reserved per turn by --schedule kv (default: the turn's max tokens)"
    },
    'usage-poll-ms': {
      type: 'integer',
      min: 1,
      placeholder: 'MS',
      help: "--schedule kv also reads each engine's KV usage from /metrics this often"
    },
    'roc-mode': {
      type: 'string',
      choices: ROC_MODES,
      help: "GRPO-RoC's pick: draws (sample, the report, default) or the released code's selection (deterministic)"
    },
    'roc-error-count': {
      type: 'string',
      choices: ERROR_COUNT_RULES,
      help: 'what RoC\'s p_err counts as a tool error: a call\'s error status (status, default) or a <tool_response> holding "error" (substring, the released code)'
    },
    'roc-min-negatives': {
      type: 'integer',
      min: 0,
      placeholder: 'K',
      help: 'negatives kept at least when the group has them (default 2)'
    },
    'roc-min-positives': {
      type: 'integer',
      min: 0,
      placeholder: 'K',
      help: 'positives kept at least when the group has them (default 2)'
    },
    advantage: { type: 'string', choices: ADVANTAGE_METHODS, help: 'advantage estimator (default grpo)' },
    'advantage-std': {
      type: 'string',
      choices: ADVANTAGE_STDS,
      help: "standard deviation of the group: population (default) or unbiased (verl's; rstar2)"
    },
    'fleet-faults': {
      type: 'string',
      choices: FLEET_FAULT_POLICIES,
      help: 'an episode whose tool call met a fleet fault: re-run it (default) or leave it out'
    },
    'max-reruns': {
      type: 'integer',
      min: 0,
      placeholder: 'N',
      help: 're-runs of one rollout after fleet faults before it is dropped (default 2)'
    },
    'partial-reward': {
      type: 'boolean',
      help: 'code problems: reward tests passed over total (default: 1 when every test passes, else 0)'
    },
    'judge-timeout-ms': {
      type: 'integer',
      min: 1,
      placeholder: 'MS',
      help: "code problems: each test's time limit when the problem gives none (default the judge's 4000)"
    },
    overlong: { type: 'string', placeholder: 'MAX,CACHE', help: 'DAPO overlong penalty on the reward' },
    'drop-equal-groups': { type: 'boolean', help: 'reject groups with equal rewards before RoC (rstar2: on)' },
    sessions: { type: 'boolean', help: 'each episode keeps its Python state across turns in a fleet session' },
    'api-key': { type: 'string', placeholder: 'K', help: "the fleet's API key" },
    'engine-api-key': { type: 'string', placeholder: 'K', help: "the engine's API key" },
    'no-progress': { type: 'boolean', help: 'no progress bar on stderr' }
  }
})

/** `value` without its undefined entries (options are exact: a key is given or absent). */
function defined<T extends Record<string, unknown>>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}

/** A flag's text, or the file it names with `@FILE`. */
function textOrFile(v: string | undefined): string | undefined {
  return v?.startsWith('@') ? readFileSync(v.slice(1), 'utf8') : v
}

/** A progress bar on a TTY, a line every 10% otherwise. */
function progressBar(out: CommandIo['stderr'], started: number): (p: RolloutProgress) => void {
  let lastDecile = -1
  return (p) => {
    const frac = p.total === 0 ? 1 : p.done / p.total
    const acc = p.done - p.failed === 0 ? 0 : p.correct / (p.done - p.failed)
    const text = `rollout [${'#'.repeat(Math.round(frac * 30)).padEnd(30, '.')}] ${p.done}/${p.total} acc ${acc.toFixed(3)} failed ${p.failed} ${((Date.now() - started) / 1000).toFixed(1)}s`
    if (out.isTTY) {
      out.write(`\r${text}`)
      if (p.done === p.total) out.write('\n')
    } else {
      const decile = Math.floor(frac * 10)
      if (decile !== lastDecile) {
        lastDecile = decile
        out.write(text + '\n')
      }
    }
  }
}

/**
 * Runs the command; resolves with the summary (also written to the summary file and stdout), or undefined after --help.
 */
export async function rolloutCommand(
  argv: string[],
  io: CommandIo = { stdout: (t) => process.stdout.write(t), stderr: process.stderr, env: process.env }
): Promise<RolloutSummary | undefined> {
  const { values, help } = parseCommandLine(ROLLOUT_COMMAND, argv, io.env)
  if (help) {
    io.stdout(commandHelp(ROLLOUT_COMMAND) + '\n')
    return undefined
  }
  let engineUrls = (values.engine ?? []).flatMap((e) => e.split(',')).filter((e) => e.length > 0)
  const scripted = engineUrls.includes(SCRIPTED_ENGINE)
  if (scripted) {
    values.model ??= 'scripted'
    values.seed ??= 0 // each rollout gets its own sampling seed, which the scripted model varies its answers by
  }
  if (engineUrls.length === 0 || values.model === undefined || values.dataset === undefined) {
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `--engine, --model and --dataset are required\n${commandHelp(ROLLOUT_COMMAND)}`,
      400
    )
  }
  const preset = values.preset === undefined ? undefined : ROLLOUT_PRESETS[values.preset as PresetName]
  const format = (values.format ?? preset?.format ?? 'hermes') as ToolCallFormat
  const style = (values.style ?? preset?.style ?? 'rstar2') as ResultStyle
  const template =
    TURN_TEMPLATES[
      (values.template ?? preset?.template ?? (format === 'hermes' ? 'chatml' : 'inline')) as 'chatml' | 'inline'
    ]
  const system = textOrFile(values.system) ?? preset?.system
  const userTemplate = textOrFile(values.userTemplate) ?? preset?.userTemplate
  const n = values.n ?? preset?.n ?? 8
  const keep = values.keep ?? preset?.keep ?? n
  const lines = readFileSync(values.dataset, 'utf8')
    .split('\n')
    .map((l, i) => ({ l, i: i + 1 }))
    .filter(({ l }) => l.trim().length > 0)
  const items = lines.slice(0, values.limit ?? Infinity).map(({ l, i }) => parseDatasetLine(l, i, system, userTemplate))
  let overlong: { maxLength: number; cacheLength: number } | undefined
  if (values.overlong !== undefined) {
    const m = /^(\d+),(\d+)$/.exec(values.overlong)
    if (m === null || Number(m[2]) <= 0 || Number(m[2]) > Number(m[1]))
      throw new TrainerError(
        TRAINER_ERROR_CODES.BAD_INPUT,
        `--overlong takes MAX,CACHE with 0 < CACHE ≤ MAX, got ${values.overlong}`,
        400
      )
    overlong = { maxLength: Number(m[1]), cacheLength: Number(m[2]) }
  }
  const algorithm = defined({
    rocMode: (values.rocMode as RocMode | undefined) ?? preset?.rocMode,
    rocErrorCount: (values.rocErrorCount as ErrorCountRule | undefined) ?? preset?.rocErrorCount,
    rocMinNegatives: values.rocMinNegatives ?? preset?.rocMinNegatives,
    rocMinPositives: values.rocMinPositives ?? preset?.rocMinPositives,
    advantage: (values.advantage as AdvantageMethod | undefined) ?? preset?.advantage,
    advantageStd: (values.advantageStd as AdvantageStd | undefined) ?? preset?.advantageStd,
    fleetFaults: values.fleetFaults as FleetFaultPolicy | undefined,
    maxReruns: values.maxReruns
  })
  const maxChars = values.maxToolResponseLength ?? preset?.truncate.maxChars
  const side = (values.toolResponseTruncateSide as TruncateSide | undefined) ?? preset?.truncate.side
  const episodeLimits = defined({
    maxTokensPerTurn: values.maxTokensPerTurn,
    maxParallelCalls: values.maxParallelCalls ?? preset?.maxParallelCalls,
    truncate:
      maxChars === undefined && side === undefined ? undefined : { maxChars: maxChars ?? 2000, side: side ?? 'middle' },
    tools: preset?.tools,
    assistantPrefix: preset?.assistantPrefix
  })
  const out = values.out ?? 'rollouts.jsonl'
  const summaryPath = values.summary ?? `${out.replace(/\.jsonl$/, '')}.summary.json`

  let scriptedEngine: ScriptedEngine | undefined
  if (scripted) {
    scriptedEngine = await startScriptedEngine(arithmeticModel)
    const url = scriptedEngine.url
    engineUrls = engineUrls.map((e) => (e === SCRIPTED_ENGINE ? url : e))
    io.stderr.write(
      `rollout: --engine scripted: a scripted arithmetic model at ${url} (no GPU; not a language model)\n`
    )
  }
  const Adapter = values.engineApi === 'sglang' ? SglangEngine : CompletionsEngine
  let engines: Engine[]
  let fleet: SandfleetClient
  let writer: JsonlWriter
  try {
    engines = engineUrls.map(
      (url) =>
        new Adapter({
          url,
          model: values.model as string,
          ...(values.engineApiKey ? { apiKey: values.engineApiKey } : {}),
          ...(values.renderChat === 'chatml' ? { renderChat: renderChatml } : {})
        })
    )
    fleet = new SandfleetClient({
      url: values.fleet ?? 'http://127.0.0.1:8080',
      ...(values.apiKey ? { apiKey: values.apiKey } : {})
    })
    writer = new JsonlWriter(out)
  } catch (err) {
    await scriptedEngine?.close()
    throw err
  }
  let engine: Engine = engines[0]
  const kept: TensorRecord[] = []
  try {
    if (engines.length > 1) {
      engine = await KvScheduler.create({
        engines,
        ...defined({
          policy: values.schedule as SchedulePolicy | undefined,
          capacityTokens: values.kvCapacity,
          reserveNewTokens: values.reserveNewTokens,
          usagePollMs: values.usagePollMs
        })
      })
    }
    const attempts = values.engineAttempts ?? 4
    const policy =
      attempts > 1 ? new RetryingEngine(engine, { maxAttempts: attempts, baseDelayMs: 200, maxDelayMs: 5000 }) : engine
    const started = Date.now()
    const summary = await runDataset({
      items,
      n,
      keep,
      concurrency: values.concurrency ?? 64,
      seed: values.seed ?? 0,
      writeAll: values.writeAll === true,
      ...(values.sessions ? { sessions: { client: fleet } } : {}),
      ...(overlong ? { overlong } : {}),
      // code problems (items with tests) are judged by the fleet
      judge: fleet,
      codeReward: defined({ partial: values.partialReward, timeoutMs: values.judgeTimeoutMs }),
      dropEqualRewardGroups: values.dropEqualGroups === true || preset?.dropEqualRewardGroups === true,
      ...algorithm,
      episode: {
        engine: policy,
        fleet,
        format,
        style,
        template,
        maxTurns: values.maxTurns ?? preset?.maxTurns ?? 10,
        maxResponseTokens: values.maxResponseTokens ?? preset?.maxResponseTokens ?? 8192,
        ...episodeLimits,
        timeoutMs: values.toolTimeoutMs ?? 5000,
        ...(values.isolation === undefined ? {} : { isolation: values.isolation as IsolationLevel }),
        sampling: { temperature: values.temperature ?? 1, ...defined({ topP: values.topP, seed: values.seed }) }
      },
      onRecord: async (r) => {
        await writer.write(r)
        if (values.tensors !== undefined && r.kept)
          kept.push({
            group: r.group,
            sample: r.sample,
            prompt_ids: r.prompt_ids,
            response_ids: r.response_ids,
            loss_mask: r.loss_mask,
            rollout_logprobs: r.rollout_logprobs,
            reward: r.reward,
            advantage: r.advantage
          })
      },
      ...(values.noProgress ? {} : { onProgress: progressBar(io.stderr, started) })
    })
    if (values.tensors !== undefined)
      await writeTensors(values.tensors, kept, defined({ padTokenId: values.padTokenId }))
    writeFileSync(
      summaryPath,
      JSON.stringify(
        {
          ...summary,
          out,
          ...defined({ tensors: values.tensors, preset: values.preset }),
          n,
          keep,
          model: values.model,
          engines: engineUrls
        },
        null,
        2
      ) + '\n'
    )
    io.stdout(JSON.stringify(summary) + '\n')
    if (summary.rollouts === 0 && summary.failed > 0)
      throw new TrainerError(
        TRAINER_ERROR_CODES.ENGINE_CONNECTION,
        `every rollout failed; first error: ${summary.first_error ?? 'unknown'}`,
        502
      )
    return summary
  } finally {
    await writer.close()
    await engine.close() // a scheduler closes its engines; closing twice is safe
    await Promise.all(engines.map(async (e) => await e.close()))
    await fleet.close()
    await scriptedEngine?.close()
  }
}
