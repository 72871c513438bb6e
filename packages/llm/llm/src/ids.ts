import type { Branded } from '@deepseek-ai/dsh-brand'
import { randomBytes } from 'node:crypto'

/** The identity of one message, unique within a session (and in practice globally). */
export type MessageId = Branded<'MessageId'>
/** The identity of one tool call; a tool-result block refers to it. */
export type CallId = Branded<'CallId'>

/** Cast-only: brands a string as a `MessageId`, with no validation. */
export const MessageId = (raw: string): MessageId => raw as MessageId
/** Cast-only: brands a string as a `CallId`, with no validation. */
export const CallId = (raw: string): CallId => raw as CallId

/**
 * What makes this process's ids its own: 96 random bits, drawn once when the
 * module loads (each process and each worker thread loads it anew), as 24
 * hex digits. Two processes share it with a probability of about n²/2^97
 * for n processes, as unlikely as two random UUIDs colliding.
 */
const PROCESS_PREFIX = randomBytes(12).toString('hex')
/** How many ids this process has made; it never repeats within the process. */
let issued = 0

/*
 * An id is its kind's prefix, the process's random prefix, `-`, and a
 * per-process counter in base 36. A fresh `randomUUID()` per id costs a
 * random-pool read and ~580 bytes of string building on Node 20, and a tool
 * turn makes seven ids; this is one string concatenation. Unique across
 * processes and sessions as UUIDs are (the prefix), and within a process by
 * construction (the counter). Not a secret and not unguessable: ids name
 * messages, they grant nothing.
 *
 * The part before the counter is one flat string per kind, made once
 * (`join` builds a flat string; `+` and template literals build a chain of
 * 32-byte rope nodes): each id is then one rope node over that shared prefix
 * and the counter's digits. The session log keeps every message id, so this
 * is about 60 bytes less kept per id than building the whole id per call
 * (three rope nodes).
 */
const MESSAGE_PREFIX = ['msg_', PROCESS_PREFIX, '-'].join('')
const CALL_PREFIX = ['call_', PROCESS_PREFIX, '-'].join('')

/** A fresh message id (`msg_<24 hex digits>-<counter>`), unique across processes and sessions. */
export const newMessageId = (): MessageId => (MESSAGE_PREFIX + (issued++).toString(36)) as MessageId
/** A fresh call id (`call_<24 hex digits>-<counter>`), for adapters whose provider sends none. */
export const newCallId = (): CallId => (CALL_PREFIX + (issued++).toString(36)) as CallId
