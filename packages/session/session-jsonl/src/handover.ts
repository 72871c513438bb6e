/**
 * What this process knows to be on disk at the end of a session file, left by
 * a `load()` (after its truncation and repairs) or by a writer that closed
 * cleanly. The next writer of the file continues from it instead of
 * re-reading the file: loaded events are never rewritten, it appends after
 * them.
 *
 * The record is trusted only while the file still has exactly `size` bytes
 * and the live log agrees on the last event; anything else means the file
 * changed behind our back, and the writer refuses to continue it.
 */
export interface Handover {
  /** The number of events in the file. */
  count: number
  /** The file's size in bytes. */
  size: number
  /** The type and time of the last event, to tell this log from another with the same length. */
  lastType: string
  lastTime: number
}

/**
 * Handovers by file path, shared by every backend in the process (on
 * `globalThis` under a registered symbol), so a persistence plugin that is
 * disposed and plugged again continues the files its previous instance wrote.
 */
export const handovers: Map<string, Handover> = ((globalThis as Record<symbol, unknown>)[
  Symbol.for('dsh.session-jsonl.handovers')
] ??= new Map<string, Handover>()) as Map<string, Handover>
