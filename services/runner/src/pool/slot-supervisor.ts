/**
 * The lives of a pool's sandboxes, written once for every driver: each slot's sandbox is made and
 * started; a start that fails is retried with exponential backoff until one comes up or the pool
 * stops; a retired sandbox is closed in the background while its replacement starts. It counts
 * what it does (starting, failing, replacements, start failures, time to replace).
 *
 * It does not decide when a sandbox is retired nor what runs on a ready one: the pool does, through
 * the hooks of {@link SlotSupervisorOptions}.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { Driver, Sandbox } from '../sandbox/contract.ts'
import type { RetireReason } from '../sandbox/retire-reasons.ts'

import type { Logger } from '../logger.ts'

/**
 * Why a sandbox was replaced: the reason its outcome gave with `retire` (what it could not undo
 * after the job, `sandbox/retire-reasons.ts`), or the pool's own: its execute rejected or it died
 * idle (`crash`), it was found tampered with before a job ran (`tampered`), it ran
 * `maxJobsPerSandbox` jobs (`max_jobs`), it did not answer by a job's hard deadline (`stalled`).
 */
export type ReplaceReason = RetireReason | 'crash' | 'stalled'

/** Who stopped answering when a job stalled: its sandbox, or the runner itself (frozen). */
export type StallCause = 'sandbox' | 'runner'

/** Hooks a pool calls on rare events (metrics, logs). Job completions are not reported here. */
export interface PoolEvents {
  /** A replacement sandbox is ready, `ms` after the old one left service. */
  replaced?: (reason: ReplaceReason, ms: number) => void
  /** A sandbox failed to start (it will be retried). */
  startFailed?: (error: unknown) => void
  /**
   * A job was answered `infra_error`, stalled: its sandbox did not answer by its hard deadline (`sandbox`), or the
   * runner was frozen past it, or across the job's `timeout` (`runner`).
   */
  stalled?: (cause: StallCause) => void
}

/** A started sandbox, with the jobs it was given. */
export interface Slot {
  sandbox: Sandbox
  jobs: number
  /** The tenant of the last job it ran (`Job.tenant`). */
  tenant?: string
}

/** Options of a {@link SlotSupervisor}. */
export interface SlotSupervisorOptions {
  driver: Driver
  language: Language
  /** Slots kept. */
  size: number
  /** First retry delay for a sandbox that failed to start; doubles up to `replaceBackoffMaxMs`. */
  replaceBackoffMs: number
  replaceBackoffMaxMs: number
  logger: Logger
  events: PoolEvents | undefined
  /** A sandbox is ready for work (first start or replacement). */
  ready: (slot: Slot) => void
  /** A started sandbox died on its own (`Sandbox.onExit`). */
  lost: (slot: Slot) => void
  /** Every slot is failing to start; `error` is the last start's. */
  allFailing: (error: unknown) => void
}

/** Starts, replaces and closes the sandboxes of one pool; see the module comment. */
export class SlotSupervisor {
  readonly #options: SlotSupervisorOptions
  /** Every sandbox not yet closed (starting, idle, busy), to close them all. */
  readonly #live = new Set<Sandbox>()
  readonly #stopping = new AbortController()
  #stopped = false
  #starting = 0
  #failing = 0
  #lastStartError: unknown
  #nextId = 0
  #replacements = 0
  #startFailures = 0
  #lastReplaceMs = 0

  constructor(options: SlotSupervisorOptions) {
    this.#options = options
  }

  /** Sandboxes booting (first start or replacement). */
  get starting(): number {
    return this.#starting
  }
  /** Slots whose last start attempt failed and that wait to retry. */
  get failing(): number {
    return this.#failing
  }
  /** True while no slot can start a sandbox. */
  get allFailing(): boolean {
    return this.#failing === this.#options.size
  }
  /** Why the last start failed. */
  get lastStartError(): unknown {
    return this.#lastStartError
  }
  /** Sandboxes replaced since start. */
  get replacements(): number {
    return this.#replacements
  }
  /** Start attempts that failed since start. */
  get startFailures(): number {
    return this.#startFailures
  }
  /** Time the last replacement took, from leaving service to ready, in ms (0 before any). */
  get lastReplaceMs(): number {
    return this.#lastReplaceMs
  }

  /** Starts every slot; resolves with whether each slot's first attempt succeeded (failed ones keep retrying). */
  startAll(): Promise<boolean[]> {
    return Promise.all(
      Array.from(
        { length: this.#options.size },
        () =>
          new Promise<boolean>((resolve) => {
            void this.#fill(undefined, resolve)
          })
      )
    )
  }

  /** Takes a sandbox out of service, closes it in the background and starts its replacement. */
  retire(slot: Slot, reason: ReplaceReason): void {
    const { sandbox } = slot
    this.#live.delete(sandbox)
    sandbox.close().catch((err: unknown) => {
      this.#options.logger.warn({ sandbox: sandbox.id, err: messageOf(err) }, 'sandbox close failed')
    })
    if (this.#stopped) return
    this.#replacements++
    void this.#fill(reason)
  }

  /** Starts nothing more (a start in progress is closed when it ends) and stops the retries. */
  stop(): void {
    this.#stopped = true
    this.#stopping.abort()
  }

  /** Closes every sandbox still open. */
  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.#live].map(async (sandbox) => {
        try {
          await sandbox.close()
        } catch (err) {
          this.#options.logger.warn({ sandbox: sandbox.id, err: messageOf(err) }, 'sandbox close failed')
        }
      })
    )
    this.#live.clear()
  }

  /**
   * Brings one slot up: creates and starts a sandbox, retrying with backoff until one is ready
   * or the supervisor stops. `onFirstAttempt` learns whether the first attempt succeeded
   * (`startAll` waits for that, not for the retries).
   */
  async #fill(reason: ReplaceReason | undefined, onFirstAttempt?: (ok: boolean) => void): Promise<void> {
    const o = this.#options
    const since = performance.now()
    let delay = o.replaceBackoffMs
    let failing = false
    let first = onFirstAttempt
    const report = (ok: boolean): void => {
      first?.(ok)
      first = undefined
    }
    while (!this.#stopped) {
      const sandbox = o.driver.createSandbox(`${o.driver.name}-${o.language}-${this.#nextId++}`)
      this.#live.add(sandbox)
      this.#starting++
      let error: unknown
      let ok = true
      try {
        await sandbox.start()
      } catch (err) {
        ok = false
        error = err
      }
      this.#starting--
      if (this.#stopped) {
        this.#live.delete(sandbox)
        await sandbox.close().catch(() => {})
        break
      }
      if (ok) {
        if (failing) this.#failing--
        if (reason !== undefined) {
          this.#lastReplaceMs = performance.now() - since
          o.events?.replaced?.(reason, this.#lastReplaceMs)
        }
        report(true)
        const slot: Slot = { sandbox, jobs: 0 }
        sandbox.onExit?.(() => {
          o.lost(slot)
        })
        o.ready(slot)
        return
      }
      this.#live.delete(sandbox)
      sandbox.close().catch(() => {})
      this.#startFailures++
      this.#lastStartError = error
      o.events?.startFailed?.(error)
      o.logger.error(
        { sandbox: sandbox.id, retryInMs: delay, err: messageOf(error) },
        'sandbox failed to start; retrying'
      )
      if (!failing) {
        failing = true
        this.#failing++
      }
      if (this.allFailing) o.allFailing(error)
      report(false)
      try {
        await sleep(delay, undefined, { signal: this.#stopping.signal })
      } catch {
        break
      }
      delay = Math.min(delay * 2, o.replaceBackoffMaxMs)
    }
    report(false)
  }
}
