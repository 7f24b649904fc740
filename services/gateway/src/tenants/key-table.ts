/**
 * Finds which configured secret a caller presented without the time taken saying anything about
 * any of them: the presented text and every configured one are reduced to SHA-256 digests (all
 * 32 bytes, whatever their lengths), and the presented digest is compared with every configured
 * digest by `timingSafeEqual`, with no early exit on a match or a mismatch. The time grows with
 * the number of entries (one comparison each), never with where or how a key differs.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

/** SHA-256 of `text` (UTF-8), 32 bytes. */
export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** Secrets (API keys) mapped to values (their tenants), looked up in constant time. */
export class KeyTable<T> {
  readonly #digests: Buffer[]
  readonly #values: T[]

  /** `entries`: each secret with its value; secrets are kept only as digests. */
  constructor(entries: ReadonlyArray<readonly [secret: string, value: T]>) {
    this.#digests = entries.map(([secret]) => sha256(secret))
    this.#values = entries.map(([, value]) => value)
  }

  /** Entries held. */
  get size(): number {
    return this.#values.length
  }

  /** The value of `presented`, or undefined; every entry is compared, whichever matches. */
  find(presented: string): T | undefined {
    const digest = sha256(presented)
    let found = -1
    for (let i = 0; i < this.#digests.length; i++) {
      if (timingSafeEqual(this.#digests[i], digest)) found = i
    }
    return found === -1 ? undefined : this.#values[found]
  }
}
