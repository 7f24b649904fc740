/**
 * The runner's compile cache: a compiled program's bytes by what made them (language, compiler version, the compile
 * argv, the source's SHA-256), bounded in bytes, the least recently used dropped first. Written only with what a
 * compiler wrote, as the sandbox's executor read it once the compile's processes were gone (its `compiled` frame),
 * never a path a job can write; read to ship a binary back to a sandbox instead of compiling again. Each binary is
 * kept with what its compile cost (its wall time, and CPU time when the sandbox measured it): a hit reports it, and a
 * request whose `compile_timeout_ms` that compile would not have fit in is answered as a compile past its limit (the
 * same verdict whatever the cache holds). The budget counts the binaries' bytes only: an entry's key and its two
 * numbers are a few dozen bytes more, not counted.
 */
import { createHash } from 'node:crypto'

/** What a binary is compiled from: its key's parts. */
export interface CompileKey {
  readonly language: string
  /** The compiler's version, as the sandbox reports it. */
  readonly version: string
  readonly argv: readonly string[]
  readonly source: string
}

/** A binary the cache holds, and what its compile cost. */
export interface CachedCompile {
  readonly binary: Buffer
  /** The compile's wall time, in ms, as the sandbox measured it. */
  readonly duration_ms: number
  /** The compiler's CPU time, user + system, in ms, when the sandbox measured it. */
  readonly cpu_ms?: number
}

/** The cache's counters, for the metrics. */
export interface CompileCacheStats {
  hits: number
  misses: number
  /** Bytes held. */
  bytes: number
  /** Binaries held. */
  entries: number
  /** Binaries dropped to stay within the budget. */
  evictions: number
}

/** The key of `what`: a digest of its parts, each length-prefixed (no two keys' parts run together). */
export function compileKeyOf(what: CompileKey): string {
  const h = createHash('sha256')
  for (const part of [what.language, what.version, ...what.argv, '\0', what.source]) {
    const bytes = Buffer.from(part, 'utf8')
    h.update(`${bytes.length}:`)
    h.update(bytes)
  }
  return h.digest('hex')
}

/** An LRU of binaries within `maxBytes`; see the module comment. */
export class CompileCache {
  readonly #entries = new Map<string, CachedCompile>()
  readonly #stats: CompileCacheStats = { hits: 0, misses: 0, bytes: 0, entries: 0, evictions: 0 }

  /** `maxBytes`: the budget (0: nothing is kept). */
  constructor(readonly maxBytes: number) {}

  /** The entry under `key` (made the most recently used), counted as a hit; undefined, counted as a miss. */
  get(key: string): CachedCompile | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) {
      this.#stats.misses++
      return undefined
    }
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    this.#stats.hits++
    return entry
  }

  /**
   * Keeps `entry` under `key`, the least recently used dropped past the budget (a binary larger than it is not kept).
   */
  set(key: string, entry: CachedCompile): void {
    if (entry.binary.length > this.maxBytes) return
    const old = this.#entries.get(key)
    if (old !== undefined) {
      this.#entries.delete(key)
      this.#stats.bytes -= old.binary.length
    }
    this.#entries.set(key, entry)
    this.#stats.bytes += entry.binary.length
    for (const [k, e] of this.#entries) {
      if (this.#stats.bytes <= this.maxBytes) break
      this.#entries.delete(k)
      this.#stats.bytes -= e.binary.length
      this.#stats.evictions++
    }
    this.#stats.entries = this.#entries.size
  }

  /** A copy of the counters. */
  stats(): CompileCacheStats {
    return { ...this.#stats, entries: this.#entries.size }
  }
}
