/**
 * The `sandfleet` command line: a table of commands, one file each in commands/, each imported
 * only when it runs (`serve` need not load the trainer library's math, nor `--help` anything).
 * Every command reads its flags with the one parser (`parseCommandLine` of @sandfleet/command-line)
 * and answers `--help` from the same declaration.
 */
import { readFileSync } from 'node:fs'
import { benchmarksInstalled } from './benchmarks-path.ts'

type Command = (argv: string[]) => Promise<void>

/**
 * Command name → implementation (imported on demand), one line of help, and whether this installation has it (default:
 * yes).
 */
export const COMMANDS: Record<string, { load: () => Promise<Command>; help: string; installed?: () => boolean }> = {
  serve: {
    load: async () => (await import('./commands/serve.ts')).serve,
    help: 'gateway and a local runner in one process (the default): --host, --port, --backend auto|process|docker|pyodide|unsafe, --pool-size'
  },
  gateway: {
    load: async () => (await import('./commands/gateway.ts')).gateway,
    help: 'the gateway alone: --runners URL,… or --runners-dns HOST:PORT, --host, --port, --max-in-flight'
  },
  runner: {
    load: async () => (await import('./commands/runner.ts')).runner,
    help: 'one runner and its internal API: --backend, --pool-size, --host, --port'
  },
  rollout: {
    load: async () => (await import('./commands/rollout.ts')).rollout,
    help: 'multi-turn rollouts against an inference engine and the fleet, written as JSONL (and .npz tensors): --engine URL, --model, --dataset FILE, --preset rstar2, --n, --keep'
  },
  bench: {
    load: async () => (await import('./commands/bench.ts')).bench,
    help: 'the load-testing harness, in a checkout of the repository: MODE|SCENARIO [flags] (step, closed, open, soak; trivial-c64, suite, …; see benchmarks/)',
    installed: benchmarksInstalled
  },
  exec: {
    load: async () => (await import('./commands/exec.ts')).exec,
    help: 'run FILE (or - for stdin) and print its output: --url URL (else a local runner), --timeout-ms, --memory-mb, --stdin-file, --json'
  }
}

/** The CLI package's version. */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

function usage(): string {
  return [
    'usage: sandfleet COMMAND [flags]   (sandfleet COMMAND --help: its flags, each also a SANDFLEET_* variable)',
    '',
    ...Object.entries(COMMANDS)
      .filter(([, c]) => c.installed?.() ?? true)
      .map(([name, c]) => `  ${name.padEnd(8)} ${c.help}`),
    '',
    '  --version  print the version'
  ].join('\n')
}

const [name = 'serve', ...argv] = process.argv.slice(2)
if (name === 'help' || name === '--help' || name === '-h') {
  console.log(usage())
} else if (name === '--version' || name === '-V' || name === 'version') {
  console.log(version())
} else {
  const command = COMMANDS[name]
  if (command === undefined) {
    console.error(`sandfleet: unknown command ${name}\n\n${usage()}`)
    process.exit(2)
  }
  command
    .load()
    .then(async (run) => {
      await run(argv)
    })
    .catch((err: Error) => {
      console.error(`sandfleet ${name}: ${err.message}`)
      process.exit(1)
    })
}
