import type { Message } from './message'

/**
 * The key under which a history snapshot answers with its history (see
 * `historyOf`). A registered symbol, so that two copies of this package in one
 * process agree on it.
 */
export const HISTORY: unique symbol = Symbol.for('@deepseek-ai/dsh-llm/history')

/**
 * The append-only history a message array is a snapshot of, or `undefined`
 * for an array that is not one (a plain array an adapter or a test built).
 *
 * Contract: the value is an opaque object that names one append-only run of a
 * session's history. Two snapshots with the same history hold the same
 * entries (the same objects) up to the shorter one's `length`. A projector
 * that rewrites earlier history (compaction) starts a new history, so a
 * snapshot taken after it answers with another object.
 *
 * This lets a consumer that processes requests incrementally (counting input
 * tokens, encoding a prompt cache, checking requests against the log) key its
 * state on the history and resume at the length it reached, instead of keying
 * on the array's identity: each snapshot is a new array, while the history it
 * belongs to stays the same across the steps of a session.
 */
export function historyOf(messages: readonly Message[]): object | undefined {
  const history = (messages as { readonly [HISTORY]?: unknown })[HISTORY]
  return typeof history === 'object' && history !== null ? history : undefined
}
