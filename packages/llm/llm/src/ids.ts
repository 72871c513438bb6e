import type { Branded } from '@deepseek-ai/dsh-brand'
import { randomUUID } from 'node:crypto'

/** The identity of one message, unique within a session (and in practice globally). */
export type MessageId = Branded<'MessageId'>
/** The identity of one tool call; a tool-result block refers to it. */
export type CallId = Branded<'CallId'>

/** Cast-only: brands a string as a `MessageId`, with no validation. */
export const MessageId = (raw: string): MessageId => raw as MessageId
/** Cast-only: brands a string as a `CallId`, with no validation. */
export const CallId = (raw: string): CallId => raw as CallId

/** A fresh random message id (`msg_<uuid>`). */
export const newMessageId = (): MessageId => `msg_${randomUUID()}` as MessageId
/** A fresh random call id (`call_<uuid>`), for adapters whose provider sends none. */
export const newCallId = (): CallId => `call_${randomUUID()}` as CallId
