import type { Context } from './cordis'
import { scopeOf } from './scope'

/** One registration: a value under a key, global or local to one subject. */
export interface ScopedEntry<T> {
  readonly key: string
  readonly value: T
  /** The subject the entry is local to; `undefined` for a global entry. */
  readonly subject: string | undefined
}

/** What changed in a registry; handed to the `onChange` callback. */
export interface ScopedChange<T> {
  readonly kind: 'add' | 'remove'
  readonly entry: ScopedEntry<T>
}

export interface ScopedRegistryOptions<T> {
  /**
   * Called synchronously after every add and remove, once the registry already
   * reflects the change. Owners use it to emit their change event (`tools/change`, …). A throw
   * propagates to whoever registered or disposed.
   */
  onChange?(change: ScopedChange<T>): void
}

/**
 * A registry whose entries revert with the fiber that registered them and are
 * either global or local to one subject (an agent).
 *
 * Lookup for a subject prefers that subject's entries over global ones; entries
 * local to other subjects are invisible to it. Several registrations of one key
 * in the same scope stack: the newest wins, and disposing it uncovers the one
 * below, so a plugin that is disposed and plugged again (hot replacement)
 * leaves exactly its new entry and nothing stale.
 *
 * Views returned by `values()` are sorted by key, not by registration order, so
 * they are byte-for-byte the same after a plugin is reloaded; they are frozen
 * and cached until the next change.
 */
export class ScopedRegistry<T> {
  private readonly stacks = new Map<string, ScopedEntry<T>[]>()
  private readonly views = new Map<string, readonly ScopedEntry<T>[]>()
  private _version = 0

  constructor(private readonly options: ScopedRegistryOptions<T> = {}) {}

  /** Increments on every change; a cheap way for callers to cache derived data. */
  get version(): number {
    return this._version
  }

  /**
   * Registers `value` under `key` in the scope of `ctx` (global unless `ctx` is
   * scoped) and reverts it when the fiber of `ctx` is disposed. The returned
   * function reverts it early; calling it twice is harmless.
   */
  register(ctx: Context, key: string, value: T): () => void {
    const subject = scopeOf(ctx)
    const dispose = ctx.effect(() => this.add(key, value, subject), `scoped-registry(${key})`)
    return () => void dispose()
  }

  /**
   * Adds an entry with no fiber attached; the caller owns its lifetime and must
   * call the returned function to remove it.
   */
  add(key: string, value: T, subject?: string): () => void {
    const entry: ScopedEntry<T> = Object.freeze({ key, value, subject })
    let stack = this.stacks.get(key)
    if (!stack) this.stacks.set(key, (stack = []))
    stack.push(entry)
    this.changed({ kind: 'add', entry })
    let removed = false
    return () => {
      if (removed) return
      removed = true
      const current = this.stacks.get(key)
      const index = current ? current.lastIndexOf(entry) : -1
      if (index < 0) return
      current!.splice(index, 1)
      if (current!.length === 0) this.stacks.delete(key)
      this.changed({ kind: 'remove', entry })
    }
  }

  /** The entry `subject` sees under `key`: its own newest entry, else the newest global one. */
  entry(key: string, subject?: string): ScopedEntry<T> | undefined {
    const stack = this.stacks.get(key)
    if (!stack) return undefined
    let global: ScopedEntry<T> | undefined
    for (let i = stack.length - 1; i >= 0; i--) {
      const entry = stack[i]!
      if (entry.subject === undefined) {
        if (subject === undefined) return entry
        global ??= entry
      } else if (subject !== undefined && entry.subject === subject) {
        return entry
      }
    }
    return global
  }

  /** The value `subject` sees under `key`, or `undefined`. */
  get(key: string, subject?: string): T | undefined {
    return this.entry(key, subject)?.value
  }

  has(key: string, subject?: string): boolean {
    return this.entry(key, subject) !== undefined
  }

  /** Every entry `subject` sees, one per key, sorted by key. Frozen and cached. */
  entries(subject?: string): readonly ScopedEntry<T>[] {
    const cacheKey = subject ?? ''
    const hit = this.views.get(cacheKey)
    if (hit) return hit
    const keys = [...this.stacks.keys()].sort()
    const view: ScopedEntry<T>[] = []
    for (const key of keys) {
      const entry = this.entry(key, subject)
      if (entry) view.push(entry)
    }
    const frozen = Object.freeze(view)
    this.views.set(cacheKey, frozen)
    return frozen
  }

  /** Every value `subject` sees, one per key, sorted by key. */
  values(subject?: string): T[] {
    return this.entries(subject).map((entry) => entry.value)
  }

  /** Every key `subject` sees, sorted. */
  keys(subject?: string): string[] {
    return this.entries(subject).map((entry) => entry.key)
  }

  private changed(change: ScopedChange<T>) {
    this._version++
    this.views.clear()
    this.options.onChange?.(change)
  }
}
