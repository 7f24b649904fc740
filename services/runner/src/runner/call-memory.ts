/**
 * What a runner remembers of the calls it ran, so that a retry never runs the code twice while
 * the runner lives: a call with a `request_id` is remembered under its tenant and that id, with a
 * digest of the request, for a bounded window (`replayCalls` calls, `replayWindowS` seconds, and
 * at most {@link REPLAY_MAX_BYTES} of results). The same request sent again with the same id is
 * answered from here:
 *
 * - its run finished: its first answer, marked `replayed: true`, nothing run;
 * - it still waits or runs: the caller waits for that run's answer (also `replayed`);
 * - its run ended without running the code (`maybe_ran: false`: queued past its budget, drained,
 *   cancelled): it is forgotten, so the retry runs it, once.
 *
 * Another request under an id already held (a caller that reuses ids) is not a retry: it runs,
 * and is remembered in the older one's place. The tenant is part of the key: one tenant's ids
 * never answer another's.
 */
import { createHash } from 'node:crypto'
import { mayHaveRun, type ExecResult, type ResolvedExecRequest } from '@sandfleet/protocol'

/** Most bytes of results held at once, whatever the count (a result is at most its two output caps and its files). */
export const REPLAY_MAX_BYTES = 64 * 1024 * 1024

/** Options of a {@link CallMemory}. */
export interface CallMemoryOptions {
  /** Calls remembered at most (0: none). */
  maxCalls: number
  /** How long a finished call is remembered, ms. */
  windowMs: number
  /** Bytes of results held at most (default {@link REPLAY_MAX_BYTES}). */
  maxBytes?: number
}

/** What {@link CallMemory.begin} found for a call. */
export type Recalled =
  /** Not a retry: run it, and hand its answer to `settle`. */
  | { readonly kind: 'run'; readonly settle: (result: ExecResult) => void }
  /** A retry of a call that ran or runs here: its answer (`replayed: true`), now or when its run ends. */
  | { readonly kind: 'replay'; readonly answer: Promise<ExecResult> | ExecResult }

interface Entry {
  readonly digest: string
  /** When it finished (`performance.now()`); undefined while it runs. */
  at: number | undefined
  result: ExecResult | undefined
  bytes: number
  /** Callers waiting for its answer. */
  waiters: Array<(result: ExecResult) => void>
}

/** The answer of a remembered run, as a retry sees it. */
function replayed(result: ExecResult): ExecResult {
  return { ...result, replayed: true }
}

/** About the bytes a result holds. */
function sizeOf(result: ExecResult): number {
  let bytes = 512 + result.stdout.length + result.stderr.length
  for (const path in result.files) bytes += path.length + (result.files[path]?.length ?? 0)
  return bytes
}

/**
 * The digest of what a request asks to run: two requests with the same digest run the same code
 * the same way. Files are taken in their paths' order.
 */
export function requestDigest(request: ResolvedExecRequest): string {
  const hash = createHash('sha256')
  hash.update(
    JSON.stringify([
      request.language,
      request.code,
      request.stdin,
      request.timeout_ms,
      request.memory_mb,
      request.isolation,
      request.fetch_files
    ])
  )
  for (const path of Object.keys(request.files).sort()) hash.update(`\0${path}\0${request.files[path]}`)
  return hash.digest('base64url')
}

/** A runner's memory of its calls; see the module comment. */
export class CallMemory {
  readonly #options: Required<CallMemoryOptions>
  /** By key, oldest first (a Map keeps insertion order; a call is moved to the end when it finishes). */
  readonly #entries = new Map<string, Entry>()
  #bytes = 0

  constructor(options: CallMemoryOptions) {
    this.#options = { maxBytes: REPLAY_MAX_BYTES, ...options }
  }

  /** Calls remembered now (running or finished). */
  get size(): number {
    return this.#entries.size
  }

  /** The key of a call of `tenant` with `requestId` (undefined: the call has no id, it is not remembered). */
  static keyOf(requestId: string | undefined, tenant: string | undefined): string | undefined {
    return requestId === undefined ? undefined : `${tenant ?? ''}\0${requestId}`
  }

  /** Looks the call of `key` and `digest` up: run it, or answer it from its earlier run. */
  begin(key: string, digest: string): Recalled {
    this.#expire()
    const known = this.#entries.get(key)
    if (known !== undefined && known.digest === digest) {
      if (known.result !== undefined) return { kind: 'replay', answer: replayed(known.result) }
      return {
        kind: 'replay',
        answer: new Promise((resolve) => known.waiters.push((r) => resolve(replayed(r))))
      }
    }
    if (this.#options.maxCalls === 0) return { kind: 'run', settle: () => {} }
    if (known !== undefined) this.#drop(key, known)
    const entry: Entry = { digest, at: undefined, result: undefined, bytes: 0, waiters: [] }
    this.#entries.set(key, entry)
    this.#evict()
    return { kind: 'run', settle: (result) => this.#settle(key, entry, result) }
  }

  #settle(key: string, entry: Entry, result: ExecResult): void {
    const waiters = entry.waiters
    entry.waiters = []
    if (this.#entries.get(key) === entry) {
      this.#entries.delete(key)
      // remembered only when the code may have run: a call that surely did not is run by its retry
      if (mayHaveRun(result)) {
        entry.at = performance.now()
        entry.result = result
        entry.bytes = sizeOf(result)
        this.#bytes += entry.bytes
        this.#entries.set(key, entry)
        this.#evict()
      }
    }
    for (const wake of waiters) wake(result)
  }

  #drop(key: string, entry: Entry): void {
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
  }

  /** Forgets the finished calls past the window. */
  #expire(): void {
    const oldest = performance.now() - this.#options.windowMs
    for (const [key, entry] of this.#entries) {
      if (entry.at === undefined) continue
      if (entry.at > oldest) break
      this.#drop(key, entry)
    }
  }

  /** Forgets the oldest finished calls while more than the bounds are held (a running one is kept: it has callers). */
  #evict(): void {
    const { maxCalls, maxBytes } = this.#options
    if (this.#entries.size <= maxCalls && this.#bytes <= maxBytes) return
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= maxCalls && this.#bytes <= maxBytes) return
      if (entry.at !== undefined) this.#drop(key, entry)
    }
  }
}
