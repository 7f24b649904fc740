/** The `sandfleet` command line: a table of commands, one file each in commands/. */
import { bench } from './commands/bench.ts'
import { exec } from './commands/exec.ts'
import { gateway } from './commands/gateway.ts'
import { rollout } from './commands/rollout.ts'
import { runner } from './commands/runner.ts'
import { serve } from './commands/serve.ts'

/** Command name → implementation and one line of help. */
export const COMMANDS: Record<string, { run: (argv: string[]) => Promise<void>, help: string }> = {
  serve: { run: serve, help: 'gateway and a local runner in one process (the default): --host, --port, --backend auto|process|docker|pyodide|unsafe, --pool-size' },
  gateway: { run: gateway, help: 'the gateway alone: --runners URL,… or --runners-dns HOST:PORT, --host, --port, --max-in-flight' },
  runner: { run: runner, help: 'one runner and its internal API: --backend, --pool-size, --host, --port' },
  rollout: { run: rollout, help: 'multi-turn rollouts against an inference engine and the fleet, written as JSONL: --engine URL, --model, --dataset FILE, --n, --keep' },
  bench: { run: bench, help: 'the load-testing harness: SCENARIO [flags] (trivial-c1, trivial-c64, batch64, sympy-c64, suite, …; see benchmarks/)' },
  exec: { run: exec, help: 'run FILE (or - for stdin) and print its output: --url URL (else a local runner), --timeout-ms, --memory-mb, --stdin-file, --json' }
}

function usage (): string {
  return ['usage: sandfleet COMMAND [flags]   (every flag is also a SANDFLEET_* variable)', '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.help}`)].join('\n')
}

const [name = 'serve', ...argv] = process.argv.slice(2)
if (name === 'help' || name === '--help' || name === '-h') {
  console.log(usage())
} else {
  const command = COMMANDS[name]
  if (command === undefined) {
    console.error(`sandfleet: unknown command ${name}\n\n${usage()}`)
    process.exit(2)
  }
  command.run(argv).catch((err: Error) => { console.error(`sandfleet ${name}: ${err.message}`); process.exit(1) })
}
