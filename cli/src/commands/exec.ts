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
import { Runner, readRunnerConfig } from '@sandfleet/runner'

/** What `exec` reads from its arguments. */
export interface ExecArgs {
  /** A path, or `-` for standard input. */
  source: string
  url: string | undefined
  json: boolean
  request: Omit<ExecRequest, 'code'>
  stdinFile: string | undefined
  /** Flags left for the local runner (`--backend`, `--pool-size`, …). */
  runnerArgs: string[]
}

/** Parses `exec`'s arguments; throws a message naming the flag at fault. */
export function parseExecArgs (argv: readonly string[]): ExecArgs {
  const out: ExecArgs = { source: '', url: undefined, json: false, request: {}, stdinFile: undefined, runnerArgs: [] }
  const int = (flag: string, raw: string | undefined): number => {
    if (raw === undefined || !/^\d+$/.test(raw)) throw new Error(`${flag}: needs a whole number, got ${raw === undefined ? 'nothing' : JSON.stringify(raw)}`)
    return Number(raw)
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = (): string | undefined => inline ?? argv[++i]
    switch (flag) {
      case '--url': out.url = value(); break
      case '--json': out.json = true; break
      case '--language': {
        const language = value()
        if (!LANGUAGES.includes(language as Language)) throw new Error(`--language: must be one of ${LANGUAGES.join(', ')}, got ${JSON.stringify(language)}`)
        out.request.language = language as Language
        break
      }
      case '--timeout-ms': out.request.timeout_ms = int(flag, value()); break
      case '--memory-mb': out.request.memory_mb = int(flag, value()); break
      case '--stdin-file': out.stdinFile = value(); break
      default:
        if (!arg.startsWith('--') && out.source === '') out.source = arg
        else if (arg.startsWith('--')) { out.runnerArgs.push(arg); if (inline === undefined && argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) out.runnerArgs.push(argv[++i]) }
        else throw new Error(`unexpected argument ${arg}`)
    }
  }
  if (out.source === '') throw new Error('which code? pass a file, or - to read it from standard input')
  if (out.url !== undefined && out.runnerArgs.length > 0) throw new Error(`${out.runnerArgs[0]}: runner flags only apply without --url`)
  return out
}

/** Runs the command. */
export async function exec (argv: string[]): Promise<void> {
  const args = parseExecArgs(argv)
  const code = args.source === '-' ? await text(process.stdin) : await readFile(args.source, 'utf8')
  const request: ExecRequest = { ...args.request, code }
  if (args.stdinFile !== undefined) request.stdin = await readFile(args.stdinFile, 'utf8')
  const result = args.url === undefined ? await runLocally(request, args.runnerArgs) : await runRemotely(request, args.url)
  report(result, args.json)
}

async function runRemotely (request: ExecRequest, url: string): Promise<ExecResult> {
  const client = new SandfleetClient({ url, batchWindowMs: 0 })
  try { return await client.execute(request) } finally { await client.close() }
}

async function runLocally (request: ExecRequest, runnerArgs: string[]): Promise<ExecResult> {
  const { config } = readRunnerConfig({ argv: runnerArgs, env: process.env, overrides: { poolSize: 1, maxSessions: 0, languages: [request.language ?? 'python'] } })
  const runner = new Runner(config)
  try {
    await runner.start()
    return await runner.execute(request)
  } finally { await runner.close() }
}

/** Prints the result and sets the exit code. */
function report (result: ExecResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  } else {
    process.stdout.write(result.stdout)
    process.stderr.write(result.stderr)
    if (result.truncated.stdout || result.truncated.stderr) process.stderr.write('[sandfleet: output truncated at the cap]\n')
    if (result.status !== 'ok' && result.status !== 'error') process.stderr.write(`[sandfleet: ${result.status}${result.error === null ? '' : `: ${result.error.message}`}]\n`)
  }
  process.exitCode = result.status === 'ok' ? 0 : result.exit_code !== null && result.exit_code > 0 ? result.exit_code : 1
}
