/**
 * A session entered in the store but not announced yet (`enterUnannounced`):
 * a driver that publishes a session together with something else (the agent
 * loop: the session and its agent) enters both, then announces both, so that
 * a listener of the first announcement already finds the second object.
 */
export interface SessionEntry {
  /**
   * Emits `session/created`. A synchronous listener throw vetoes the
   * publication and is rethrown; the session stays entered (the listeners
   * before the veto saw it created) and the caller must `detach()` it, which
   * emits the paired `session/disposed`. Callable once (`ALREADY_ENTERED`).
   */
  announce(): void
  /**
   * Removes the session from the store (its id is free again) and refuses
   * further appends. Emits `session/disposed` once when `announce` ran (also
   * a vetoed one), nothing otherwise. Bound to this exact session; harmless
   * to call again. Called by a listener during `announce`, it waits until
   * that dispatch has unwound.
   */
  detach(): void
}
