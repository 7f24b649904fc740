/**
 * sandfleet's command lines, written once: every `sandfleet` command, the services' entry points
 * and the benchmark harness declare their flags here (name, type, help, environment variable),
 * and a service's configuration schema gives its flags and variables (`configFlags`, and the
 * names of `configEnvName` and `configFlagName`). Not part of the wire contract: a client of the
 * fleet needs none of it.
 *
 * @example
 * ```ts
 * import { commandHelp, defineCommand, parseCommandLine } from '@sandfleet/command-line'
 * const SPEC = defineCommand({
 *   name: 'sandfleet exec', summary: 'run a file', positionals: 'FILE',
 *   flags: { 'timeout-ms': { type: 'integer', min: 1, help: 'wall-clock limit' } }
 * })
 * const { values, help } = parseCommandLine(SPEC, process.argv.slice(2), process.env)
 * if (help) console.log(commandHelp(SPEC))
 * ```
 */
export * from './command-line.ts'
export * from './errors.ts'
export * from './schema-message.ts'
