/**
 * The one argument parser of every `sandfleet` command (and of the services' and the harness's
 * own entry points). A command declares its flags (name, type, help, environment variable); the
 * parser reads `--flag value`, `--flag=value`, boolean `--flag`, `--` (the end of flags), `--help`
 * and `-h`, and lists every problem in one {@link CommandLineError}. The help text is made from
 * the same declaration, so a flag cannot exist without its help.
 *
 * ```ts
 * const SPEC = defineCommand({
 *   name: 'sandfleet exec', summary: 'run a file and print its output', positionals: 'FILE|-',
 *   flags: { 'timeout-ms': { type: 'integer', min: 1, help: 'wall-clock limit' } }
 * })
 * const { values, positionals, help } = parseCommandLine(SPEC, process.argv.slice(2), process.env)
 * if (help) console.log(commandHelp(SPEC))
 * values.timeoutMs // number | undefined
 * ```
 */
import type { TObject } from '@sinclair/typebox'
import { CommandLineError } from './errors.ts'
import { configEnvName, configFlagName } from './schema-message.ts'

/** How a flag's text becomes its value. `list`: comma-separated, and repeating the flag adds to it. */
export type FlagType = 'string' | 'number' | 'integer' | 'boolean' | 'list'

/** One flag of a command. */
export interface FlagSpec {
  type: FlagType
  /** One line (or a few) saying what it does; the default is added to the help from `default`. */
  help: string
  /**
   * The environment variable read when the flag is absent (given an environment); `false`: none. Default
   * `SANDFLEET_<FLAG>`.
   */
  env?: string | false
  /** Value when neither the flag nor its variable is set. */
  default?: string | number | boolean | readonly string[]
  /** The only values accepted (for `list`, of each item). */
  choices?: readonly string[]
  /** `list` only: each item must be a whole number (≥ `min` when given). */
  items?: 'integer'
  /** Smallest number accepted (`number`, `integer`, a list of integers' items). */
  min?: number
  /** Placeholder of the value in the help (default from the type: N, TEXT, A,B…). */
  placeholder?: string
}

/** A command: its name, one line of summary, its positionals and its flags (keyed by flag name, without `--`). */
export interface CommandSpec {
  /** As typed: `sandfleet serve`. */
  name: string
  summary: string
  /** Positionals in the usage line (`FILE|-`, `SCENARIO`); none when absent (a positional is then a problem). */
  positionals?: string
  /** More lines printed after the flags (examples, notes). */
  notes?: string
  flags: Readonly<Record<string, FlagSpec>>
}

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S
type ValueOf<F extends FlagSpec> = F['type'] extends 'boolean'
  ? boolean
  : F['type'] extends 'number' | 'integer'
    ? number
    : F['type'] extends 'list'
      ? string[]
      : string
/**
 * The values of a command's flags, keyed in camelCase (`--pool-size` → `poolSize`); absent when not given and without
 * default.
 */
export type FlagValues<F extends Readonly<Record<string, FlagSpec>>> = {
  -readonly [K in keyof F as Camel<K & string>]?: ValueOf<F[K]>
}

/** What {@link parseCommandLine} read. */
export interface ParsedCommandLine<F extends Readonly<Record<string, FlagSpec>>> {
  values: FlagValues<F>
  positionals: string[]
  /** `--help` or `-h` was given: print {@link commandHelp} and do nothing else (nothing else was checked). */
  help: boolean
  /** Where each value came from (`--pool-size`, `SANDFLEET_POOL_SIZE`), keyed like `values`. */
  origin: Record<string, string>
}

/** Identity with the spec's literal type kept, so `values` are typed from it. */
export function defineCommand<F extends Readonly<Record<string, FlagSpec>>>(
  spec: CommandSpec & { flags: F }
): CommandSpec & { flags: F } {
  return spec
}

const camel = (flag: string): string => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** The variable a flag reads, or undefined. */
export function flagEnvName(flag: string, spec: FlagSpec): string | undefined {
  return spec.env === false ? undefined : (spec.env ?? configEnvName(camel(flag)))
}

function convert(name: string, spec: FlagSpec, raw: string, previous: unknown): { value?: unknown; problem?: string } {
  const got = `got ${JSON.stringify(raw)}`
  switch (spec.type) {
    case 'boolean':
      if (/^(1|true|yes)$/i.test(raw)) return { value: true }
      if (/^(0|false|no|)$/i.test(raw)) return { value: false }
      return { problem: `${name}: expected true or false, ${got}` }
    case 'integer':
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw)
      if (!Number.isFinite(n) || (spec.type === 'integer' && !Number.isInteger(n)))
        return { problem: `${name}: needs ${spec.type === 'integer' ? 'a whole number' : 'a number'}, ${got}` }
      if (spec.min !== undefined && n < spec.min) return { problem: `${name}: must be ≥ ${spec.min}, ${got}` }
      return { value: n }
    }
    case 'list': {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
      const bad = spec.choices === undefined ? undefined : items.find((i) => !spec.choices?.includes(i))
      if (bad !== undefined)
        return { problem: `${name}: must be one of ${spec.choices?.join(', ')}, got ${JSON.stringify(bad)}` }
      if (
        spec.items === 'integer' &&
        items.some((i) => !/^-?\d+$/.test(i) || (spec.min !== undefined && Number(i) < spec.min))
      ) {
        return {
          problem: `${name}: needs whole numbers${spec.min === undefined ? '' : ` ≥ ${spec.min}`} separated by commas, ${got}`
        }
      }
      return { value: [...(Array.isArray(previous) ? (previous as string[]) : []), ...items] }
    }
    default:
      if (spec.choices !== undefined && !spec.choices.includes(raw))
        return { problem: `${name}: must be one of ${spec.choices.join(', ')}, ${got}` }
      return { value: raw }
  }
}

/** What a flag looks like; any other word after a flag is its value (so `--args '--x 1'` passes `--x 1` on). */
const FLAG_SHAPE = /^--([a-z][a-z0-9-]*(=.*)?)?$/i

/** Options of {@link parseCommandLine}. */
export interface ParseOptions {
  /** Flags the spec does not declare are returned in `rest` (with the value after them) instead of being problems. */
  passUnknown?: boolean
}

/**
 * Reads `argv` (after the command's name) and, for flags not given, `env` (omit it when another
 * layer reads the variables, as the services' config loaders do). Throws a {@link CommandLineError}
 * listing every problem; with `--help` returns at once with `help: true`.
 */
export function parseCommandLine<F extends Readonly<Record<string, FlagSpec>>>(
  spec: CommandSpec & { flags: F },
  argv: readonly string[],
  env?: Readonly<Record<string, string | undefined>>,
  options: ParseOptions = {}
): ParsedCommandLine<F> & { rest: string[] } {
  const values: Record<string, unknown> = {}
  const origin: Record<string, string> = {}
  const positionals: string[] = []
  const rest: string[] = []
  const problems: string[] = []
  if (argv.includes('--help') || argv.includes('-h')) {
    const end = argv.indexOf('--')
    const at = Math.min(...['--help', '-h'].map((h) => argv.indexOf(h)).filter((i) => i !== -1))
    if (end === -1 || at < end) return { values: {} as FlagValues<F>, positionals, rest, help: true, origin }
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('--') || arg === '-') {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    const flag = spec.flags[name]
    const next = argv[i + 1]
    const hasNext = next !== undefined && !FLAG_SHAPE.test(next)
    if (flag === undefined) {
      if (options.passUnknown === true) {
        rest.push(arg)
        if (eq === -1 && hasNext) rest.push(argv[++i])
      } else problems.push(`--${name}: unknown flag (see --help)`)
      continue
    }
    let raw: string
    if (eq !== -1) raw = arg.slice(eq + 1)
    else if (flag.type === 'boolean') raw = 'true'
    else if (hasNext) raw = argv[++i]
    else {
      problems.push(`--${name}: needs a value`)
      continue
    }
    const key = camel(name)
    const { value, problem } = convert(`--${name}`, flag, raw, values[key])
    if (problem !== undefined) problems.push(problem)
    else {
      values[key] = value
      origin[key] = `--${name}`
    }
  }
  for (const [name, flag] of Object.entries(spec.flags)) {
    const key = camel(name)
    if (key in values) continue
    const variable = flagEnvName(name, flag)
    const raw = variable === undefined ? undefined : env?.[variable]
    if (raw !== undefined && raw !== '' && variable !== undefined) {
      const { value, problem } = convert(`${variable} (--${name})`, flag, raw, undefined)
      if (problem !== undefined) problems.push(problem)
      else {
        values[key] = value
        origin[key] = variable
      }
    } else if (flag.default !== undefined) {
      values[key] = Array.isArray(flag.default) ? [...flag.default] : flag.default
    }
  }
  if (spec.positionals === undefined && positionals.length > 0 && options.passUnknown !== true)
    problems.push(`unexpected argument ${JSON.stringify(positionals[0])}`)
  if (spec.positionals === undefined && options.passUnknown === true) rest.push(...positionals.splice(0))
  if (problems.length > 0) throw new CommandLineError(problems)
  return { values: values as FlagValues<F>, positionals, rest, help: false, origin }
}

function placeholder(flag: FlagSpec): string {
  if (flag.type === 'boolean') return ''
  if (flag.placeholder !== undefined) return ` ${flag.placeholder}`
  if (flag.choices !== undefined) return ` ${flag.choices.join('|')}${flag.type === 'list' ? ',…' : ''}`
  return { string: ' TEXT', number: ' X', integer: ' N', list: ' A,B,…' }[flag.type]
}

/** The command's help: usage line, summary, then each flag with its variable, default and help. */
export function commandHelp(spec: CommandSpec, width = helpWidth()): string {
  const lines = [
    `usage: ${spec.name}${spec.positionals === undefined ? '' : ` ${spec.positionals}`} [flags]`,
    '',
    spec.summary,
    '',
    'flags:'
  ]
  for (const [name, flag] of Object.entries(spec.flags)) {
    const variable = flagEnvName(name, flag)
    const dflt =
      flag.default === undefined || (Array.isArray(flag.default) && flag.default.length === 0)
        ? ''
        : ` (default ${String(flag.default)})`
    lines.push(
      `  --${name}${placeholder(flag)}${variable === undefined ? '' : `   [${variable}]`}`,
      `      ${flag.help}${dflt}`
    )
  }
  lines.push('  --help, -h', '      print this help')
  if (spec.notes !== undefined) lines.push('', spec.notes)
  return wrapHelp(lines.join('\n'), width)
}

/** The width help is wrapped to: the terminal's (at most 120 columns), 80 off a terminal. */
export function helpWidth(): number {
  const columns = process.stdout.isTTY === true ? process.stdout.columns : undefined
  return columns !== undefined && columns >= 40 ? Math.min(columns, 120) : 80
}

/**
 * Help text wrapped at spaces to `width` columns, so that a terminal never breaks a flag or a
 * word: a continuation is indented under the text of its line (past a table row's term, `  step
 * N calls …`, past a description's indent otherwise). A word longer than the width stays whole.
 */
export function wrapHelp(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width))
    .join('\n')
}

function wrapLine(line: string, width: number): string {
  if (line.length <= width) return line
  const term = /^\s*\S+ {2,}(?=\S)/.exec(line)?.[0] ?? /^\s*/.exec(line)?.[0] ?? ''
  const hang = ' '.repeat(term.length < width / 2 ? term.length : 4)
  const lines: string[] = []
  let current = term
  let space = ''
  let hasWord = false
  for (const token of line.slice(term.length).match(/\S+| +/g) ?? []) {
    if (token.startsWith(' ')) {
      space = token
      continue
    }
    if (hasWord && current.length + space.length + token.length > width) {
      lines.push(current)
      current = hang + token
    } else current += (hasWord ? space : '') + token
    space = ''
    hasWord = true
  }
  lines.push(current)
  return lines.join('\n')
}

/**
 * A service's config schema as flags: each property a flag (`maxInFlight` → `--max-in-flight`,
 * variable `SANDFLEET_MAX_IN_FLIGHT`), its description as help. Values stay text (lists: split at
 * commas) for the config loader, which types, bounds and reports them with the variables.
 */
export function configFlags(
  schema: TObject,
  options: { except?: readonly string[]; only?: readonly string[] } = {}
): Record<string, FlagSpec> {
  const flags: Record<string, FlagSpec> = {}
  for (const [key, raw] of Object.entries(schema.properties)) {
    if (options.except?.includes(key) === true || (options.only !== undefined && !options.only.includes(key))) continue
    const prop = raw as {
      type?: string
      description?: string
      default?: unknown
      anyOf?: Array<{ const?: unknown }>
      minimum?: number
      maximum?: number
    }
    const choices =
      prop.anyOf?.every((a) => typeof a.const === 'string') === true
        ? prop.anyOf.map((a) => a.const as string)
        : undefined
    const bounds =
      prop.minimum !== undefined || prop.maximum !== undefined ? ` [${prop.minimum ?? ''}…${prop.maximum ?? ''}]` : ''
    flags[configFlagName(key)] = {
      type: prop.type === 'boolean' ? 'boolean' : 'string',
      help: `${prop.description ?? key}${bounds}${typeof prop.default === 'number' || (typeof prop.default === 'string' && prop.default !== '') ? ` (default ${prop.default})` : ''}`,
      placeholder:
        choices !== undefined
          ? choices.join('|')
          : prop.type === 'integer' || prop.type === 'number'
            ? 'N'
            : prop.type === 'array'
              ? 'A,B,…'
              : 'TEXT'
    }
  }
  return flags
}
