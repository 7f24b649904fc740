/** The `sandfleet` command line: a table of commands, one file each in commands/. */
import { rollout } from './commands/rollout.ts'
import { serve } from './commands/serve.ts'

/** Command name → implementation. */
export const COMMANDS: Record<string, (argv: string[]) => Promise<void>> = { serve, rollout }

const [name = 'serve', ...argv] = process.argv.slice(2)
const command = COMMANDS[name]
if (command === undefined) {
  console.error(`sandfleet: unknown command ${name}; commands: ${Object.keys(COMMANDS).join(', ')}`)
  process.exit(2)
}
command(argv).catch((err: Error) => { console.error(`sandfleet ${name}: ${err.message}`); process.exit(1) })
