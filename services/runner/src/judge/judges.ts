/**
 * The runner's judging: which languages it judges and how (a whole program in one sandbox of a pool whose driver
 * judges, else one job a test), the compilers' versions read in its sandboxes (`probe`, once, when first needed), the
 * compile cache, and the verdicts counted. The runner hands it the way to its pools (`submit`).
 */
import {
  failedJudgeResult,
  JUDGE_LANGUAGE_TABLE,
  compileArgv,
  judgeLanguageRow,
  type ExecResult,
  type JudgeLanguageInfo,
  type JudgeResult,
  type Language,
  type ResolvedJudgeRequest
} from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { Driver, PooledJob } from '../sandbox/contract.ts'
import { CompileCache, type CompileCacheStats } from './compile-cache.ts'
import { judgeByJobs } from './exec-judge.ts'
import { COMPILE_MEMORY_MB, judgeInSandbox } from './sandbox-judge.ts'

/**
 * The probe of a sandbox's languages: each row's version command (the first line it prints; the runner keeps its
 * version number, {@link versionNumberOf}), and whether g++ reads its precompiled header.
 */
const PROBE = `import json, subprocess, sys
out = {}
for row in json.loads(sys.stdin.read()):
    try:
        p = subprocess.run(row['version'], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        continue
    lines = (p.stdout.strip() or p.stderr.strip()).splitlines()
    if p.returncode != 0 or not lines:
        continue
    found = {'version': lines[0].strip()}
    if row.get('pch'):
        try:
            q = subprocess.run(row['pch'], input='#include <%s>\\n' % row['header'], capture_output=True, text=True,
                               timeout=60, cwd='/tmp')
            found['pch'] = any(l.startswith('! ') and l.endswith('.gch') for l in q.stderr.splitlines())
        except (OSError, subprocess.SubprocessError):
            found['pch'] = False
    out[row['name']] = found
print(json.dumps(out))
`

/** Where a judge's jobs go: the deadline of its first for waiting, and its tenant (its call's context). */
export interface JudgePlace {
  readonly startBy: number
  readonly tenant: string | undefined
}

/** What a language's probe found in a sandbox. */
interface Probed {
  /** Its version number, bare (`3.11.2`, `12.2.0`). */
  version: string
  pch?: boolean
}

/**
 * The version number in what a version command printed, bare: `Python 3.11.2` → `3.11.2`, `12.2.0` → `12.2.0`, V8's
 * `11.3.244.8-node.38` → `11.3.244.8`; undefined when it holds none.
 */
export function versionNumberOf(text: string): string | undefined {
  return /\d+(?:\.\d+)*/.exec(text)?.[0]
}

/** The counters of the judges, for the metrics. */
export interface JudgeCounters {
  cache: CompileCacheStats
  /** Tests the sandboxes ran past a judge's first failing test before its stop reached them. */
  ranPastStop: number
}

/** What the runner gives its {@link Judges}. */
export interface JudgesOptions {
  /** The pools' drivers by language (after start). */
  drivers: () => ReadonlyMap<Language, Driver>
  /** Hands a job of the runner's own (the probe) to its language's pool: `done` gets its result once. */
  submit: (job: PooledJob, done: (result: ExecResult) => void) => void
  /** The runner's `queueTimeoutMs`: the longest a job of its own, or a judge's later one, may wait. */
  queueTimeoutMs: number
  /** The compile cache's budget, in bytes. */
  cacheBytes: number
  /** Most bytes kept of each run's stdout and stderr (past it, `output_limit`). */
  maxOutputBytes: number
  /** Most bytes of each given back. */
  echoBytes: number
  /** The runner's version of javascript: its V8's (`process.versions.v8`; its number is reported). */
  javascriptVersion: string
}

/** The runner's judging; see the module comment. */
export class Judges {
  readonly cache: CompileCache
  #ranPastStop = 0
  #probed: Promise<ReadonlyMap<string, Probed>> | undefined
  #found: ReadonlyMap<string, Probed> | undefined

  constructor(private readonly options: JudgesOptions) {
    this.cache = new CompileCache(options.cacheBytes)
  }

  /**
   * The languages the runner judges, by name: Python and javascript where it has their pools; C and C++ where the
   * Python pool's sandboxes judge (whether their compilers are there, the probe finds out).
   */
  languages(): Set<string> {
    const drivers = this.options.drivers()
    const out = new Set<string>()
    for (const row of JUDGE_LANGUAGE_TABLE) {
      if (row.runtime === 'javascript' && drivers.has('javascript')) out.add(row.name)
      if (row.runtime === 'python' && drivers.has('python')) out.add(row.name)
      if (row.runtime === 'binary' && drivers.get('python')?.judges === true) out.add(row.name)
    }
    return out
  }

  /**
   * Judges one resolved request (its language one of {@link languages}), its jobs handed to their pools by `submit`
   * (with the caller's options); never rejects.
   */
  async run(
    judge: ResolvedJudgeRequest,
    requestId: string | undefined,
    place: JudgePlace,
    submit: (job: PooledJob, done: (result: ExecResult) => void) => void
  ): Promise<JudgeResult> {
    const pool = judge.language === 'javascript' ? 'javascript' : 'python'
    const { maxOutputBytes, echoBytes, queueTimeoutMs } = this.options
    if (this.options.drivers().get(pool)?.judges !== true) {
      const refusal = judge.tests.some((t) => t.call !== undefined)
        ? 'call tests need a backend whose sandboxes judge (process, docker)'
        : judge.compare.kind === 'checker'
          ? 'a checker needs a backend whose sandboxes judge (process, docker)'
          : undefined
      if (refusal !== undefined) return this.#refused(judge, requestId, refusal)
      return await judgeByJobs(judge, requestId, { submit, maxOutputBytes, echoBytes, place, queueTimeoutMs })
    }
    // A compiled language's compiler is the sandbox's: its version (the compile cache's key) read there, once.
    const compiled = [judge.language, ...(judge.compare.kind === 'checker' ? [judge.compare.language] : [])].filter(
      (language) => judgeLanguageRow(language)?.runtime === 'binary'
    )
    let versions: ReadonlyMap<string, Probed> = this.#found ?? new Map()
    if (compiled.length > 0) {
      try {
        versions = await this.probe()
      } catch (err) {
        return failed(judge, requestId, 'infra_error', 'SF_ERR_RUNNER_SANDBOX_FAILED', messageOf(err))
      }
      for (const language of compiled)
        if (!versions.has(language))
          return this.#refused(judge, requestId, `this runner's sandboxes have no ${language} compiler`)
    }
    const compilers = new Map([...versions].map(([name, p]) => [name, p.version]))
    return await judgeInSandbox(judge, requestId, {
      cache: this.cache,
      versions: compilers,
      maxOutputBytes,
      echoBytes,
      submit,
      place,
      ranPastStop: (tests) => {
        this.#ranPastStop += tests
      }
    })
  }

  /**
   * The versions of the languages the Python pool's sandboxes judge, read in one of them (once; a probe that failed
   * is tried again at the next judge).
   */
  probe(): Promise<ReadonlyMap<string, Probed>> {
    this.#probed ??= this.#probe().then(
      (found) => {
        this.#found = found
        return found
      },
      (err: unknown) => {
        this.#probed = undefined
        throw err
      }
    )
    return this.#probed
  }

  async #probe(): Promise<ReadonlyMap<string, Probed>> {
    const rows = JUDGE_LANGUAGE_TABLE.filter((r) => r.runtime !== 'javascript' && r.version !== undefined).map((r) => {
      const argv = compileArgv(r)
      const pch =
        r.precompiledHeader !== undefined && r.compile !== undefined && argv !== undefined
          ? [r.compile.compiler, ...r.compile.flags, '-x', 'c++', '-H', '-fsyntax-only', '-']
          : undefined
      return { name: r.name, version: r.version, pch, header: r.precompiledHeader }
    })
    const job: PooledJob = {
      startBy: performance.now() + this.options.queueTimeoutMs,
      request: {
        language: 'python',
        code: PROBE,
        stdin: JSON.stringify(rows),
        timeout_ms: 120_000,
        memory_mb: COMPILE_MEMORY_MB,
        files: {},
        fetch_files: [],
        isolation: 'fork'
      },
      maxOutputBytes: 65_536
    }
    const result = await new Promise<ExecResult>((resolve) => {
      this.options.submit(job, resolve)
    })
    if (result.status !== 'ok')
      throw new Error(`the probe of the sandbox's compilers ended ${result.status}: ${result.error?.message ?? ''}`)
    const found = JSON.parse(result.stdout) as Record<string, Probed>
    // a language whose version command printed no version number is not taken as found
    return new Map(
      Object.entries(found).flatMap(([name, p]): Array<[string, Probed]> => {
        const version = versionNumberOf(p.version)
        return version === undefined ? [] : [[name, { ...p, version }]]
      })
    )
  }

  /**
   * The languages judged, with their versions, each a bare number: javascript's the runner's own V8's, the others' as
   * the probe read them in a sandbox (`unknown` until it has; a language the probe did not find is left out).
   */
  info(): JudgeLanguageInfo[] {
    const out: JudgeLanguageInfo[] = []
    const judged = this.languages()
    for (const row of JUDGE_LANGUAGE_TABLE) {
      if (!judged.has(row.name)) continue
      const probed =
        row.runtime === 'javascript'
          ? { version: versionNumberOf(this.options.javascriptVersion) ?? 'unknown' }
          : this.#found?.get(row.name)
      if (probed === undefined && this.#found !== undefined) continue
      const info: JudgeLanguageInfo = {
        name: row.name,
        aliases: [...row.aliases],
        title: row.title,
        version: probed?.version ?? 'unknown'
      }
      if (probed !== undefined && 'pch' in probed && probed.pch !== undefined) info.precompiled_header = probed.pch
      out.push(info)
    }
    return out
  }

  /** The counters, for the metrics. */
  counters(): JudgeCounters {
    return { cache: this.cache.stats(), ranPastStop: this.#ranPastStop }
  }

  #refused(judge: ResolvedJudgeRequest, requestId: string | undefined, message: string): JudgeResult {
    return failed(judge, requestId, 'invalid_request', 'SF_ERR_RUNNER_LANGUAGE', message)
  }
}

/** A judge answered without running: `verdict`, its code and why. */
function failed(
  judge: ResolvedJudgeRequest,
  requestId: string | undefined,
  verdict: JudgeResult['verdict'],
  type: string,
  message: string
): JudgeResult {
  const result = failedJudgeResult(verdict, judge.language, type, message, { total: judge.tests.length })
  if (verdict !== 'invalid_request') result.maybe_ran = false
  if (requestId !== undefined) result.request_id = requestId
  return result
}
