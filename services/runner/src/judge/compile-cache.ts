/**
 * The runner's compile cache: a compiled program's bytes by what made them (language, compiler version, the compile
 * argv, the source's SHA-256), bounded in bytes, the least recently used dropped first. Written only with what a
 * compiler wrote, as the sandbox's executor read it once the compile's processes were gone (its `compiled` frame),
 * never a path a job can write; read to ship a binary back to a sandbox instead of compiling again.
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
  readonly #entries = new Map<string, Buffer>()
  readonly #stats: CompileCacheStats = { hits: 0, misses: 0, bytes: 0, entries: 0, evictions: 0 }

  /** `maxBytes`: the budget (0: nothing is kept). */
  constructor(readonly maxBytes: number) {}

  /** The binary under `key` (made the most recently used), counted as a hit; undefined, counted as a miss. */
  get(key: string): Buffer | undefined {
    const binary = this.#entries.get(key)
    if (binary === undefined) {
      this.#stats.misses++
      return undefined
    }
    this.#entries.delete(key)
    this.#entries.set(key, binary)
    this.#stats.hits++
    return binary
  }

  /** Keeps `binary` under `key`, the least recently used dropped past the budget (one larger than it is not kept). */
  set(key: string, binary: Buffer): void {
    if (binary.length > this.maxBytes) return
    const old = this.#entries.get(key)
    if (old !== undefined) {
      this.#entries.delete(key)
      this.#stats.bytes -= old.length
    }
    this.#entries.set(key, binary)
    this.#stats.bytes += binary.length
    for (const [k, b] of this.#entries) {
      if (this.#stats.bytes <= this.maxBytes) break
      this.#entries.delete(k)
      this.#stats.bytes -= b.length
      this.#stats.evictions++
    }
    this.#stats.entries = this.#entries.size
  }

  /** A copy of the counters. */
  stats(): CompileCacheStats {
    return { ...this.#stats, entries: this.#entries.size }
  }
}
