/**
 * Queued jobs grouped by their caller's AbortSignal. A signal gets one abort listener, however
 * many of its jobs wait (a batch's items share their request's): adding and removing an
 * EventTarget listener per job cost more than the rest of queueing it, and past 10 listeners on
 * one signal Node printed a MaxListenersExceededWarning, with an `inspect` of the signal, for
 * every batch.
 */

/** Something that waits in at most one group; the group is kept on it so leaving costs one delete. */
export interface Grouped<T> {
  group: Set<T> | undefined
}

/** Groups of waiting items by signal; see the module comment. */
export class SignalGroups<T extends Grouped<T>> {
  readonly #bySignal = new WeakMap<AbortSignal, Set<T>>()
  readonly #onAbort: (items: ReadonlySet<T>) => void

  /** `onAbort` gets the items still in a signal's group, in the order they were added, when it aborts. */
  constructor(onAbort: (items: ReadonlySet<T>) => void) {
    this.#onAbort = onAbort
  }

  /** Puts `item` in `signal`'s group; the signal's first item adds the listener. */
  add(signal: AbortSignal, item: T): void {
    let group = this.#bySignal.get(signal)
    if (group === undefined) {
      const items = new Set<T>()
      group = items
      this.#bySignal.set(signal, items)
      signal.addEventListener(
        'abort',
        () => {
          this.#onAbort(items)
          for (const i of items) i.group = undefined
          items.clear()
        },
        { once: true }
      )
    }
    group.add(item)
    item.group = group
  }

  /** Takes `item` out of its group (it left the queue); a no-op when it is in none. */
  delete(item: T): void {
    item.group?.delete(item)
    item.group = undefined
  }
}
