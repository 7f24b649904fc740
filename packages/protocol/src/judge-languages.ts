/**
 * The languages a program can be judged in, as rows of one table: a language is one row (its name and aliases, the
 * source file it is written to, how it is compiled, how it runs, how its version is read). The runner sends a row's
 * argv to the sandbox's executor, which knows nothing of languages but Python's fast path; the sandbox images install
 * what the rows run (sandbox-images/python: build-rootfs.sh, the Dockerfile, precompile-headers.sh, whose flags a test
 * holds equal to these).
 */

/** How a row's program runs. */
export const JUDGE_RUNTIMES = ['python', 'binary', 'javascript'] as const
/**
 * `python`: the executor's fast path (the code compiled to bytecode once, each test a fork of its warm zygote);
 * `binary`: compiled once in the sandbox, each test an exec of the binary; `javascript`: each test one run in a
 * javascript isolate.
 */
export type JudgeRuntime = (typeof JUDGE_RUNTIMES)[number]

/** How a compiled row is compiled: `compileArgv` joins it into the compiler's argv. */
export interface JudgeCompileStep {
  /** The compiler, looked up on the sandbox's PATH. */
  readonly compiler: string
  /** The flags, before `-o`: also the flags its precompiled header was built with. */
  readonly flags: readonly string[]
  /** The file the compiler writes, in the work dir. */
  readonly output: string
  /** What comes after the source (libraries to link). */
  readonly libs: readonly string[]
}

/** One language of the judge. */
export interface JudgeLanguageRow {
  /** Its name in requests and results. */
  readonly name: string
  /** Other names a request may give it by (case-insensitive), e.g. `c++`, `py3`. */
  readonly aliases: readonly string[]
  /** What it is, for people (`/v1/info`, runtimes lists). */
  readonly title: string
  readonly runtime: JudgeRuntime
  /** The file the code is written to in the sandbox's work dir. */
  readonly source: string
  /** How it is compiled; absent for a language with no compile step of its own (Python's is to bytecode). */
  readonly compile?: JudgeCompileStep
  /** How each test runs it (for a binary: argv[0] names the binary; the executor runs its own sealed copy). */
  readonly run: readonly string[]
  /** What prints its version in the sandbox (the compile cache keys on it); absent: the runner's own (javascript). */
  readonly version?: readonly string[]
  /**
   * A header the sandbox images precompile with `compile.flags` (`bits/stdc++.h`), so that g++ reads the `.gch`
   * instead of parsing the header again.
   */
  readonly precompiledHeader?: string
}

const ROWS = [
  {
    name: 'python',
    aliases: ['python3', 'py', 'py3'],
    title: 'Python 3',
    runtime: 'python',
    source: 'main.py',
    run: ['python3', 'main.py'],
    version: ['python3', '--version']
  },
  {
    name: 'cpp',
    aliases: ['c++', 'cpp17', 'cxx', 'g++'],
    title: 'C++17 (g++)',
    runtime: 'binary',
    source: 'main.cpp',
    compile: { compiler: 'g++', flags: ['-std=c++17', '-O2', '-DONLINE_JUDGE', '-pipe'], output: 'main', libs: [] },
    run: ['./main'],
    version: ['g++', '-dumpfullversion'],
    precompiledHeader: 'bits/stdc++.h'
  },
  {
    name: 'c',
    aliases: ['c11', 'gcc'],
    title: 'C11 (gcc)',
    runtime: 'binary',
    source: 'main.c',
    compile: { compiler: 'gcc', flags: ['-std=c11', '-O2', '-DONLINE_JUDGE', '-pipe'], output: 'main', libs: ['-lm'] },
    run: ['./main'],
    version: ['gcc', '-dumpfullversion']
  },
  {
    name: 'javascript',
    aliases: ['js', 'node', 'nodejs'],
    title: 'JavaScript (V8 isolate)',
    runtime: 'javascript',
    source: 'main.js',
    run: ['node', 'main.js']
  }
] as const satisfies readonly JudgeLanguageRow[]

/** The table. */
export const JUDGE_LANGUAGE_TABLE: readonly JudgeLanguageRow[] = Object.freeze(ROWS)

/** A language of the judge, by its name. */
export type JudgeLanguage = (typeof ROWS)[number]['name']
/** The names of the table's languages, in its order. */
export const JUDGE_LANGUAGES: readonly JudgeLanguage[] = Object.freeze(ROWS.map((row) => row.name))

const BY_NAME: ReadonlyMap<string, JudgeLanguageRow> = new Map(
  JUDGE_LANGUAGE_TABLE.flatMap((row) => [row.name, ...row.aliases].map((n) => [n.toLowerCase(), row]))
)

/** Every name a request may give a language by: the names, then the aliases. */
export const JUDGE_LANGUAGE_NAMES: readonly string[] = Object.freeze([
  ...JUDGE_LANGUAGES,
  ...JUDGE_LANGUAGE_TABLE.flatMap((row) => row.aliases)
])

/** The row a name or alias (any case) gives, or undefined. */
export function judgeLanguageRow(name: string): JudgeLanguageRow | undefined {
  return BY_NAME.get(name.toLowerCase())
}

/** The compiler's argv of a compiled row: compiler, flags, `-o` output, the source, libraries. */
export function compileArgv(row: JudgeLanguageRow): string[] | undefined {
  const c = row.compile
  return c === undefined ? undefined : [c.compiler, ...c.flags, '-o', c.output, row.source, ...c.libs]
}
