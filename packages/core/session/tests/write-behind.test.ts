import { describe, expect, it } from 'vitest'
import { WriteBehind, type WriteBehindQueue, type WriteBehindStorage } from '@deepseek-ai/dsh-session'
import { deferred } from './helpers'

/** What a fake storage was asked to do, in order: `write 0,1`, `sync`, `close`. */
type Call = string

/**
 * A `WriteBehind` over an array queue (events are their seqs) and a storage
 * whose calls the test settles one by one: each call waits on its own
 * deferred, released with `next()` (or left to run with `auto`).
 */
function harness(options: { persisted?: number; batchSize?: number; intervalMs?: number; auto?: boolean } = {}) {
  const items: number[] = []
  const queue: WriteBehindQueue<number[]> = {
    get length() {
      return items.length
    },
    take: () => items.splice(0),
    clear: () => void (items.length = 0),
  }
  const calls: Call[] = []
  const pending: Array<ReturnType<typeof deferred<void>>> = []
  const reached: Array<() => void> = []
  const step = (call: Call) => {
    calls.push(call)
    if (options.auto) return Promise.resolve()
    const gate = deferred<void>()
    pending.push(gate)
    reached.splice(0).forEach((resolve) => resolve())
    return gate.promise
  }
  const storage: WriteBehindStorage<number[]> = {
    write: (batch) => step(`write ${batch.join(',')}`),
    sync: () => step('sync'),
    close: () => step('close'),
  }
  const failures: Error[] = []
  const behind = new WriteBehind({
    queue,
    storage,
    persisted: options.persisted ?? 0,
    intervalMs: options.intervalMs ?? 60_000,
    batchSize: options.batchSize ?? 1000,
    failure: (error) => new Error(`stored nothing: ${(error as Error).message}`),
    onFail: (error) => void failures.push(error),
  })
  let next = options.persisted ?? 0
  return {
    behind,
    calls,
    failures,
    /** Queues the next event (as the backend does: into its queue, then `queued()`). */
    add(count = 1) {
      for (let i = 0; i < count; i++) {
        items.push(next++)
        behind.queued()
      }
    },
    /** Resolves once a storage call is waiting. */
    async waiting() {
      if (pending.length > 0) return
      await new Promise<void>((resolve) => reached.push(resolve))
    },
    /** Settles the oldest waiting storage call (after it is reached). */
    async settle(error?: Error) {
      await this.waiting()
      const gate = pending.shift()!
      if (error) gate.reject(error)
      else gate.resolve()
    },
  }
}

/** Whether `promise` has settled, after the microtasks queued now have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('WriteBehind (dsh-session): the write-behind every backend shares', () => {
  it('queues without touching the storage; a flush writes everything queued as one batch and syncs once', async () => {
    const h = harness()
    h.add(3)
    expect(h.behind.nextSeq).toBe(3)
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.calls).toEqual([])
    const flushed = h.behind.flush()
    await h.settle()
    await h.settle()
    await flushed
    expect(h.calls).toEqual(['write 0,1,2', 'sync'])
  })

  it('a flush with nothing pending resolves at once without a storage call', async () => {
    const h = harness({ persisted: 5, auto: true })
    await h.behind.flush()
    h.add()
    await h.behind.flush()
    await h.behind.flush()
    expect(h.calls).toEqual(['write 5', 'sync'])
  })

  it('a full batch is written at once, without a flush and without a sync', async () => {
    const h = harness({ batchSize: 4 })
    h.add(4)
    await h.settle()
    expect(h.calls).toEqual(['write 0,1,2,3'])
  })

  it('the interval writes what is queued, without a sync', async () => {
    const h = harness({ intervalMs: 1 })
    h.add(2)
    await h.settle()
    expect(h.calls).toEqual(['write 0,1'])
  })

  it('flushes coalesce: one sync covers every flush whose events are written; a later flush waits only for its own events', async () => {
    const h = harness()
    h.add(2)
    const first = h.behind.flush()
    const same = h.behind.flush()
    await h.waiting() // write 0,1 under way
    h.add()
    const later = h.behind.flush()
    await h.settle() // write 0,1 done
    await h.settle() // sync: covers the first two flushes only
    await Promise.all([first, same])
    expect(await settled(later)).toBe(false)
    await h.settle() // write 2
    await h.settle() // sync
    await later
    expect(h.calls).toEqual(['write 0,1', 'sync', 'write 2', 'sync'])
  })

  it('a failure is sticky: the pending and every later flush reject with the same typed error, reported once, also once the cause is gone', async () => {
    const h = harness()
    h.add(2)
    const flushed = h.behind.flush()
    await h.settle(new Error('ENOSPC'))
    const error = (await flushed.catch((caught) => caught)) as Error
    expect(error.message).toBe('stored nothing: ENOSPC')
    expect(h.behind.failed).toBe(error)
    h.add()
    await expect(h.behind.flush()).rejects.toBe(error)
    await expect(h.behind.flush()).rejects.toBe(error)
    expect(h.failures).toEqual([error])
    // Nothing more reaches the storage: events queued after the failure are dropped.
    expect(h.calls).toEqual(['write 0,1'])
  })

  it('a failure the backend reports itself (fail) stops the writer the same way', async () => {
    const h = harness({ auto: true })
    h.add()
    const unencodable = new Error('event 1 cannot be encoded')
    h.behind.fail(unencodable)
    await expect(h.behind.flush()).rejects.toBe(unencodable)
    expect(h.failures).toEqual([unencodable])
    expect(h.calls).toEqual([])
  })

  it('close drains and syncs, then closes the storage; calling it again returns the same promise', async () => {
    const h = harness({ auto: true })
    h.add(2)
    const closing = h.behind.close()
    expect(h.behind.closed).toBe(true)
    expect(h.behind.close()).toBe(closing)
    await closing
    await h.behind.whenClosed()
    expect(h.calls).toEqual(['write 0,1', 'sync', 'close'])
  })

  it('close after a failure still closes the storage, and rejects with the failure', async () => {
    const h = harness()
    h.add()
    const closing = h.behind.close()
    await h.settle(new Error('EIO'))
    await h.settle() // close
    await expect(closing).rejects.toThrow('stored nothing: EIO')
    expect(h.calls).toEqual(['write 0', 'close'])
  })

  it('a storage that fails to close makes close reject with that failure', async () => {
    const h = harness()
    const closing = h.behind.close()
    await h.settle(new Error('lock file stuck'))
    await expect(closing).rejects.toThrow('lock file stuck')
  })

  it('discard drops the queue, rejects pending flushes with the given error (not reported), and closes', async () => {
    const h = harness()
    h.add(2)
    const dropped = new Error('its publication was vetoed')
    const flushed = h.behind.flush()
    await h.waiting() // the write of 0,1 is under way
    const discarding = h.behind.discard(dropped)
    h.add()
    await h.settle() // the write under way finishes
    await h.settle() // close
    await discarding
    await expect(flushed).rejects.toBe(dropped)
    expect(h.failures).toEqual([])
    expect(h.calls).toEqual(['write 0,1', 'close'])
  })
})
