/**
 * `sandfleet exec FILE|-`: runs one snippet and prints what it printed. With `--url` it asks a
 * running fleet (`sandfleet serve`, a gateway); without, it starts a local runner for the one
 * call (backend `auto`, or `--backend`). The process exits with the snippet's exit code (1 for
 * any other status, which is reported on stderr); `--json` prints the whole ExecResult instead.
 *
 *   echo 'print(6*7)' | sandfleet exec -
 *   sandfleet exec solve.py --url http://127.0.0.1:8080 --timeout-ms 5000 --stdin-file in.txt
 */
import { readFile } from 'node:fs/promises'
import { text } from 'node:stream/consumers'
import { SandfleetClient } from '@sandfleet/client'
import { LANGUAGES, type ExecRequest, type ExecResult, type Language } from '@sandfleet/protocol'
import { commandHelp, defineCommand, parseCommandLine } from '@sandfleet/command-line'
import { RUNNER_COMMAND, Runner, readRunnerConfig } from '@sandfleet/runner'

const RUNNER_FLAGS = Object.fromEntries(
  Object.entries(RUNNER_COMMAND.flags).filter(([name]) => !['host', 'port'].includes(name))
)

/** The command's flags: the call's, then the local runner's (without --url). */
export const EXEC_COMMAND = defineCommand({
  name: 'sandfleet exec',
  positionals: 'FILE|-',
  summary:
    'Runs FILE (- for standard input) and prints its output; exits with its exit code (1 for any other status, reported on stderr). With --url it asks a running fleet, else it starts a local runner for the one call.',
  flags: {
    url: {
      type: 'string',
      env: false,
      help: 'a running fleet (sandfleet serve, a gateway); without it, a local runner',
      placeholder: 'URL'
    },
    json: { type: 'boolean', env: false, help: 'print the whole ExecResult as JSON' },
    language: { type: 'string', env: false, choices: LANGUAGES, help: 'language of the code (default python)' },
    'timeout-ms': { type: 'integer', env: false, min: 1, help: 'wall-clock limit of the run' },
    'memory-mb': { type: 'integer', env: false, min: 1, help: 'memory limit of the run' },
    'stdin-file': {
      type: 'string',
      env: false,
      placeholder: 'FILE',
      help: 'file given to the code as its standard input'
    },
    ...RUNNER_FLAGS
  },
  notes:
    "examples:\n  echo 'print(6*7)' | sandfleet exec -\n  sandfleet exec solve.py --url http://127.0.0.1:8080 --timeout-ms 5000 --stdin-file in.txt"
})

/** What `exec` reads from its arguments. */
export interface ExecArgs {
  /** A path, or `-` for standard input. */
  source: string
  url: string | undefined
  json: boolean
  request: Omit<ExecRequest, 'code'>
  stdinFile: string | undefined
  /** Settings of the local runner (`backend`, `poolSize`, …), as read. */
  runner: Record<string, unknown>
  /** `--help` was asked. */
  help: boolean
}

/** Parses `exec`'s arguments; throws a message naming the flag at fault. */
export function parseExecArgs(argv: readonly string[]): ExecArgs {
  const { values, positionals, help } = parseCommandLine(EXEC_COMMAND, argv)
  const { url, json, language, timeoutMs, memoryMb, stdinFile, ...runner } = values
  const request: Omit<ExecRequest, 'code'> = {}
  if (language !== undefined) request.language = language as Language
  if (timeoutMs !== undefined) request.timeout_ms = timeoutMs
  if (memoryMb !== undefined) request.memory_mb = memoryMb
  const out: ExecArgs = { source: positionals[0] ?? '', url, json: json === true, request, stdinFile, runner, help }
  if (help) return out
  if (out.source === '') throw new Error('which code? pass a file, or - to read it from standard input')
  if (positionals.length > 1)
    throw new Error(`unexpected argument ${JSON.stringify(positionals[1])}: one file at a time`)
  const runnerFlag = Object.keys(runner)[0]
  if (url !== undefined && runnerFlag !== undefined)
    throw new Error(
      `--${runnerFlag.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}: runner flags only apply without --url`
    )
  return out
}

/** Runs the command. */
export async function exec(argv: string[]): Promise<void> {
  const args = parseExecArgs(argv)
  if (args.help) {
    console.log(commandHelp(EXEC_COMMAND))
    return
  }
  const code = args.source === '-' ? await text(process.stdin) : await readFile(args.source, 'utf8')
  const request: ExecRequest = { ...args.request, code }
  if (args.stdinFile !== undefined) request.stdin = await readFile(args.stdinFile, 'utf8')
  const result = args.url === undefined ? await runLocally(request, args.runner) : await runRemotely(request, args.url)
  report(result, args.json)
}

async function runRemotely(request: ExecRequest, url: string): Promise<ExecResult> {
  const client = new SandfleetClient({ url, batchWindowMs: 0 })
  try {
    return await client.execute(request)
  } finally {
    await client.close()
  }
}

async function runLocally(request: ExecRequest, runnerValues: Record<string, unknown>): Promise<ExecResult> {
  const { config } = readRunnerConfig({
    values: runnerValues,
    env: process.env,
    overrides: { poolSize: 1, maxSessions: 0, languages: [request.language ?? 'python'] }
  })
  const runner = new Runner(config)
  try {
    await runner.start()
    return await runner.execute(request)
  } finally {
    await runner.close()
  }
}

/** Prints the result and sets the exit code. */
function report(result: ExecResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } else {
    process.stdout.write(result.stdout)
    process.stderr.write(result.stderr)
    if (result.truncated.stdout || result.truncated.stderr)
      process.stderr.write('[sandfleet: output truncated at the cap]\n')
    if (result.status !== 'ok' && result.status !== 'error')
      process.stderr.write(`[sandfleet: ${result.status}${result.error === null ? '' : `: ${result.error.message}`}]\n`)
  }
  process.exitCode =
    result.status === 'ok' ? 0 : result.exit_code !== null && result.exit_code > 0 ? result.exit_code : 1
}
