/**
 * Plain objects the session keeps, made without an allocation site.
 *
 * V8 tracks the objects an object or array literal allocates at the
 * literal's site and, once they keep surviving (the session log keeps every
 * message, its content list and its blocks), decides to allocate them in the
 * old generation directly ("pretenuring"). That decision deoptimizes every
 * optimized function that inlined the literal, in a long session's first
 * rounds (the cold round of issue 18). An object made by `new` and a list
 * made by `slice` have no allocation site, so the decision never reaches the
 * code that builds messages.
 *
 * The objects are still plain: their prototype is `Object.prototype` (so they
 * compare, print, clone and serialize as the literals did), with the same own
 * keys in the same order. Lists are `Array`s.
 */
import type { ContentBlock, MessageSourceMap, TextBlock, ToolCallBlock, ToolResultBlock } from './content'
import type { CallId } from './ids'

export type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** `{ type: 'text', text }` (unfrozen). */
export const TextRecord = function (this: Mutable<TextBlock>, text: string) {
  this.type = 'text'
  this.text = text
} as unknown as new (text: string) => TextBlock
TextRecord.prototype = Object.prototype

/** `{ type: 'tool-call', id, name, arguments }` (unfrozen). */
export const ToolCallRecord = function (this: Mutable<ToolCallBlock>, id: CallId, name: string, args: string) {
  this.type = 'tool-call'
  this.id = id
  this.name = name
  this.arguments = args
} as unknown as new (id: CallId, name: string, args: string) => ToolCallBlock
ToolCallRecord.prototype = Object.prototype

/** `{ type: 'tool-result', toolCallId, content }` (unfrozen; a failed call's block, with `isError`, stays a literal). */
export const ToolResultRecord = function (this: Mutable<ToolResultBlock>, toolCallId: CallId, content: readonly ContentBlock[]) {
  this.type = 'tool-result'
  this.toolCallId = toolCallId
  this.content = content
} as unknown as new (toolCallId: CallId, content: readonly ContentBlock[]) => ToolResultBlock
ToolResultRecord.prototype = Object.prototype

/** `{ kind: 'tool', callId }` (unfrozen). */
export const ToolSourceRecord = function (this: Mutable<MessageSourceMap['tool']>, callId: CallId) {
  this.kind = 'tool'
  this.callId = callId
} as unknown as new (callId: CallId) => MessageSourceMap['tool']
ToolSourceRecord.prototype = Object.prototype

const NO_OBJECTS: object[] = [{}]
NO_OBJECTS.pop()
const NO_STRINGS: string[] = ['']
NO_STRINGS.pop()

/**
 * A new empty list with the elements kind of objects. Not an empty literal:
 * besides its allocation site, an empty literal starts as a list of small
 * integers and changes its hidden class on its first object, so code that
 * handles lists made both ways meets two hidden classes.
 */
export function objectList<T extends object>(): T[] {
  return NO_OBJECTS.slice() as T[]
}

/** A new empty list with the elements kind of strings (see `objectList`). */
export function stringList(): string[] {
  return NO_STRINGS.slice()
}
