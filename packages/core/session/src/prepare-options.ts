import type { AnySessionEvent, SessionMetaInput } from './types'

/** How `prepare` builds a session: fresh (`meta`), forked (`meta` + `seed`), or loaded (`events`). */
export interface PrepareOptions {
  /** The meta of a fresh or forked session. */
  meta?: SessionMetaInput
  /**
   * A closed-turn prefix to copy (what `fork` passes): the child log is its
   * own `session/meta` followed by these events re-numbered so that `seq`
   * stays the index, with their data and time unchanged.
   *
   * The events of a fork (`fork(source).events`, which start with the fork's
   * own `session/meta`) are taken as that fork, as long as the fork was not
   * entered: its meta gives `parentSession` and `cwd` (a `meta.cwd` given
   * here wins; a different `meta.parentSession` is refused with
   * `INVALID_ARGUMENT`), and the events after it are the seed. So forking is
   * `prepare(childId, { seed: ctx.sessions.fork(source, boundary).events })`,
   * and the child never holds a second, nested meta of its own.
   */
  seed?: readonly AnySessionEvent[]
  /**
   * A whole log loaded from persistence, `session/meta` first. It is replayed
   * through the same validation, invariants and projection as appends, in one
   * linear pass, and becomes the session's log as is (`loadedLength`). The
   * session takes ownership: the envelopes and their data are frozen in place
   * and become the log entries (their `type` swapped for the shared canonical
   * string), so a resumed log holds no second copy. An envelope field other
   * than `type`, `seq`, `time`, `data` and `ignorable` is refused
   * (`INVALID_EVENT`).
   */
  events?: readonly AnySessionEvent[]
}
