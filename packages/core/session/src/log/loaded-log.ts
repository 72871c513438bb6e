import { packChunkJson } from './chunk-json'
import { ChunkPack } from './chunk-pack'
import { chunkDataShape, envelopeIsPlain } from './chunk-shape'
import { SessionError } from '../errors'
import { createEventsView } from './events-view'
import { SlotList } from './slot-list'
import type { AnySessionEvent } from '../types'

const views = new WeakMap<object, LoadedLog>()

/**
 * A session log as a persistence backend reads it back, held compactly: the
 * value a backend returns as `LoadedSession.events` when it wants a resume to
 * be cheap (spec §13: 1,000,000 events in ≤ 3 s and ≤ 300 MB).
 *
 * ```ts
 * const log = new LoadedLog()
 * for (const line of lines) log.push(JSON.parse(line))
 * for (const repair of repairSession(log.events).events) log.push(repair)
 * return { id, events: log.events, repairs, warnings }
 * ```
 *
 * Contract:
 * - `push` takes ownership of one stored event as `JSON.parse` returned it
 *   (or a value with the same guarantee: plain objects, arrays and JSON
 *   primitives only, no cycles), in seq order. Its checks are the backend's
 *   (seq, time, known type); the session's come when `prepare` replays it.
 * - An `assistant/chunk` event of a documented shape (`{ type, seq, time,
 *   data }` with data `{ turn, step, chunk }`, see dsh-session's README) whose
 *   `seq` is its position is packed at once, and the parsed objects are
 *   dropped: a loaded chunk costs about 30 bytes instead of about 200, and
 *   the load never holds the whole log as objects. Everything else is kept as
 *   pushed (not copied, not frozen yet).
 * - `events` is a read-only array view of what was pushed (packed chunks are
 *   rebuilt on read: equal, deep-frozen, a new object per read).
 * - `ctx.sessions.prepare(id, { events: log.events })` recognizes the view
 *   and replays it on the trusted path: JSON.parse output is lossless JSON by
 *   construction, so the generic lossless-JSON walk is skipped, while the
 *   shape checks, the structural invariants (R-SES-4), the projection and the
 *   deep freeze all run. The session takes over the entry list (no copy;
 *   the log copies its entries before it pushes again, and a second
 *   session prepared from it gets a copy) and shares the packed chunks:
 *   pushing more afterwards changes neither that session nor the view.
 */
export class LoadedLog {
  /** The events pushed so far, as a read-only array (what `LoadedSession.events` carries). */
  readonly events: readonly AnySessionEvent[]
  // The entries: an event object, or the index of a packed chunk in `pack`. Once a session has
  // adopted the list (`loadedEntries`), it appends to it: this log then reads only its first
  // `count` entries, and copies them before pushing more.
  private slots = new SlotList()
  private count = 0
  private adopted = false
  private readonly pack = new ChunkPack()

  constructor() {
    const log = this
    this.events = createEventsView({
      get slots() {
        return log.slots
      },
      pack: this.pack,
      get length() {
        return log.count
      },
    })
    views.set(this.events, this)
  }

  /** The number of events pushed. */
  get length(): number {
    return this.count
  }

  /**
   * Appends one stored event (see the class contract). Throws `INVALID_EVENT`
   * for a value that is not an object, which no event can be.
   */
  push(event: unknown): void {
    if (event === null || typeof event !== 'object' || Array.isArray(event)) {
      throw new SessionError('INVALID_EVENT', `event ${this.count} is not an object`, { seq: this.count })
    }
    this.own()
    const loose = event as { type?: unknown; seq?: unknown; time?: unknown; data?: unknown }
    if (loose.type === 'assistant/chunk' && loose.seq === this.count && envelopeIsPlain(event)) {
      const data = loose.data as { turn: number; step: number; chunk: Record<string, unknown> }
      const time = loose.time
      if (typeof time === 'number' && Number.isFinite(time) && typeof data === 'object' && data !== null) {
        const shape = chunkDataShape(data)
        if (shape !== -1) {
          const index = this.pack.add(data.turn, data.step, time, data.chunk, shape)
          if (index >= 0) {
            this.slots.pushPacked(index)
            this.count++
            return
          }
        }
      }
    }
    this.slots.put(this.count++, event as AnySessionEvent)
  }

  /**
   * Appends the event whose JSON text is `bytes[start, end)` when it is an
   * `assistant/chunk` event of a documented shape at seq `length`, written
   * exactly as `JSON.stringify` writes it (`{"type":"assistant/chunk","seq":…,
   * "time":…,"data":{"turn":…,"step":…,"chunk":{…}}}`, non-negative integer
   * numbers); returns `false`, changing nothing, for any other text, which the
   * caller then parses and `push`es itself (and checks as it does every line).
   *
   * For backends that store events as JSON lines: the chunk is packed from the
   * bytes, without `JSON.parse` and without the four objects it would build.
   * The result is the same as `push(JSON.parse(text))`.
   */
  pushChunkJson(bytes: Uint8Array, start: number, end: number): boolean {
    this.own()
    const index = packChunkJson(this.pack, bytes, start, end, this.count)
    if (index < 0) return false
    this.slots.pushPacked(index)
    this.count++
    return true
  }

  /** Makes the entry list this log's own again after a session adopted it. */
  private own(): void {
    if (!this.adopted) return
    this.slots = this.slots.slice(this.count)
    this.adopted = false
  }
}

/**
 * The entries and packed chunks behind `events`, when `events` is the view of
 * a `LoadedLog`, for a session to adopt as its storage: the log's own array
 * the first time (the log copies it before pushing again), a copy of its
 * entries after that (another session owns the array by then).
 */
export function loadedEntries(events: readonly AnySessionEvent[]): { readonly slots: SlotList; readonly pack: ChunkPack } | undefined {
  const log = views.get(events)
  if (log === undefined) return undefined
  // Not adopted yet, the log's list holds exactly its `count` entries.
  const slots = log['adopted'] ? log['slots'].slice(log['count']) : log['slots']
  log['adopted'] = true
  return { slots, pack: log['pack'] }
}
