/**
 * The accounting of a product run, call by call: each call is answered once, with the status it
 * must have and the right stdout. An answer whose nonce names another call is misrouted (it does
 * not answer its own call); a second answer to a call is a duplicate; a call never answered by the
 * end is lost. Verdicts:
 * - `right`: the expected status and (when one is expected) stdout;
 * - `wrong`: a status of the code's own (`ok`, `error`, `timeout`, `memory`, `killed`) that is not
 *   the expected one, or the wrong stdout: the fleet answered, and answered wrong;
 * - `failed`: the fleet did not run it: a fleet status (`overloaded`, `queue_timeout`,
 *   `infra_error`), an HTTP error, a transport error, a response that cannot be read. Those that a
 *   caller should retry (`overloaded`, `queue_timeout`, `infra_error`, HTTP 429/503) are counted
 *   `retriable` too.
 */
import { classOf, type BenchCall } from '../workloads/calls.ts'
import type { Answer } from './targets.ts'

/** Statuses the code itself produces: an answer with one of these was run. */
export const CODE_STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'timeout', 'memory', 'killed'])
/** Answers a caller should retry. */
export const RETRIABLE: ReadonlySet<string> = new Set([
  'overloaded',
  'queue_timeout',
  'infra_error',
  'sandbox_error',
  'http_429',
  'http_503'
])

/** What the ledger counted. */
export interface Accounting {
  /** Calls released. */
  calls: number
  /** Calls with at least one answer of their own. */
  answered: number
  right: number
  wrong: number
  failed: number
  retriable: number
  lost: number
  /** Extra answers to calls already answered. */
  duplicated: number
  /** Answers carrying another call's nonce, or none it can be matched by. */
  misrouted: number
  /** First answers by status (`ok`, `error`, `http_429`, `transport_UND_ERR_SOCKET`, …). */
  statuses: Record<string, number>
  /** Wrong answers by what was wrong (`expected ok, got error`, `stdout`). */
  wrongBy: Record<string, number>
}

/** Counts answers against calls; see the module comment. */
export class Ledger {
  readonly #prefix: string
  readonly #calls: BenchCall[] = []
  readonly #answers: number[] = []
  readonly #statuses = new Map<string, number>()
  readonly #wrongBy = new Map<string, number>()
  readonly latencyMs: number[] = []
  /** First answers' latencies by the class of their call (`short`, `long`, `timeout`). */
  readonly latencyByClass = new Map<string, number[]>()
  /** The sum of the `cpu_ms` first answers carried: the calls' own CPU, as the fleet measured it. */
  callCpuMs = 0
  /** First answers that carried a `cpu_ms`. */
  measuredCalls = 0
  right = 0
  wrong = 0
  failed = 0
  retriable = 0
  duplicated = 0
  misrouted = 0
  answered = 0

  constructor(runId: string) {
    this.#prefix = `${runId}-`
  }

  /** Registers a call; answers its index and nonce. */
  add(call: BenchCall): { index: number; nonce: string } {
    const index = this.#calls.push(call) - 1
    this.#answers.push(0)
    return { index, nonce: this.#prefix + index }
  }

  /** Calls registered. */
  get calls(): number {
    return this.#calls.length
  }

  /** The index a nonce names, or -1. */
  #indexOf(nonce: string): number {
    if (!nonce.startsWith(this.#prefix)) return -1
    const i = Number(nonce.slice(this.#prefix.length))
    return Number.isInteger(i) && i >= 0 && i < this.#calls.length ? i : -1
  }

  /**
   * Records one answer for the call at `index` (the call its request carried at the answer's
   * position); when the answer carries a nonce, it must name that call. Returns the verdict.
   */
  answer(
    index: number | undefined,
    answer: Pick<Answer, 'nonce' | 'status' | 'stdout' | 'cpuMs'>,
    latencyMs: number
  ): 'right' | 'wrong' | 'failed' | 'duplicated' | 'misrouted' {
    const named = answer.nonce === undefined ? index : this.#indexOf(answer.nonce)
    if (named === undefined || named < 0 || named !== index) {
      this.misrouted++
      return 'misrouted'
    }
    if (this.#answers[named]++ > 0) {
      this.duplicated++
      return 'duplicated'
    }
    if (answer.cpuMs !== undefined) {
      this.callCpuMs += answer.cpuMs
      this.measuredCalls++
    }
    return this.#first(named, answer.status, answer.stdout, latencyMs)
  }

  /** Records that the request of the call at `index` failed as a whole (`http_429`, a transport error). */
  fail(index: number, status: string, latencyMs: number): 'failed' | 'duplicated' {
    if (this.#answers[index]++ > 0) {
      this.duplicated++
      return 'duplicated'
    }
    return this.#first(index, status, '', latencyMs) as 'failed'
  }

  #first(index: number, status: string, stdout: string, latencyMs: number): 'right' | 'wrong' | 'failed' {
    this.answered++
    this.latencyMs.push(latencyMs)
    const kind = classOf(this.#calls[index])
    const ofClass = this.latencyByClass.get(kind)
    if (ofClass === undefined) this.latencyByClass.set(kind, [latencyMs])
    else ofClass.push(latencyMs)
    this.#statuses.set(status, (this.#statuses.get(status) ?? 0) + 1)
    if (!CODE_STATUSES.has(status)) {
      this.failed++
      if (RETRIABLE.has(status)) this.retriable++
      return 'failed'
    }
    const call = this.#calls[index]
    let why: string | undefined
    if (status !== call.status && call.accept?.includes(status) !== true) why = `expected ${call.status}, got ${status}`
    else if (call.stdout !== undefined && stdout !== call.stdout) why = 'stdout'
    if (why === undefined) {
      this.right++
      return 'right'
    }
    this.wrong++
    this.#wrongBy.set(why, (this.#wrongBy.get(why) ?? 0) + 1)
    return 'wrong'
  }

  /** The counts so far; calls not answered yet count as lost. */
  accounting(): Accounting {
    const sorted = (m: Map<string, number>): Record<string, number> =>
      Object.fromEntries([...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
    return {
      calls: this.#calls.length,
      answered: this.answered,
      right: this.right,
      wrong: this.wrong,
      failed: this.failed,
      retriable: this.retriable,
      lost: this.#calls.length - this.answered,
      duplicated: this.duplicated,
      misrouted: this.misrouted,
      statuses: sorted(this.#statuses),
      wrongBy: sorted(this.#wrongBy)
    }
  }
}
