import { createToolResultMessage, createUserMessage, safeEnd, safeStart, type CallId, type ContentBlock, type Message, type UserMessage } from '@deepseek-ai/dsh-llm'
import type { Todo } from '@deepseek-ai/dsh-session'
import type { HistoryEntry } from './meter'
import type { KeptUserMessages, PrunedResult } from './types'

/** The source of every message compaction writes into the history (tool-result stubs keep their tool source). */
export const COMPACTION_SOURCE = Object.freeze({ kind: 'plugin' as const, plugin: 'compaction' })

/** Counts the tokens of a text with the meter's estimator (uncalibrated units). */
export type TextCounter = (text: string) => number

/** The text of a message's blocks, each non-text block shown as `[image]`, `[tool-call]`… */
export function blocksText(content: readonly ContentBlock[]): string {
  let out = ''
  for (const block of content) out += block.type === 'text' ? block.text : `[${block.type}]`
  return out
}

/** A message the person wrote (a prompt or steering from the user), not a tool result or a plugin's context. */
export function isPersonMessage(message: Message): boolean {
  if (message.role !== 'user' || message.source.kind !== 'user') return false
  for (const block of message.content) if (block.type === 'tool-result') return false
  return true
}

/** `text` cut to about `maxTokens`, keeping its start and its end around a note of what was cut. */
export function truncateMiddle(text: string, maxTokens: number, count: TextCounter): string {
  const tokens = count(text)
  if (tokens <= maxTokens) return text
  const keep = Math.max(0, Math.floor((text.length * maxTokens) / tokens) - 60)
  const head = text.slice(0, safeEnd(text, Math.ceil(keep / 2)))
  const tail = text.slice(safeStart(text, text.length - Math.floor(keep / 2)))
  return `${head}\n[… ${(text.length - head.length - tail.length).toLocaleString('en-US')} characters cut …]\n${tail}`
}

/** `text` cut to about `maxTokens`, keeping its end. */
export function truncateStart(text: string, maxTokens: number, count: TextCounter): string {
  const tokens = count(text)
  if (tokens <= maxTokens) return text
  const start = safeStart(text, text.length - Math.max(0, Math.floor((text.length * maxTokens) / tokens) - 40))
  return `[… ${start.toLocaleString('en-US')} characters cut …] ${text.slice(start)}`
}

/**
 * The person's messages of a range, verbatim, newest first within `budget`
 * tokens: earlier summaries' kept messages count as the oldest ones (they
 * came before), then each person message of the range. Messages that do not
 * fit are counted as omitted, with what earlier summaries omitted. When not
 * even the newest fits, it is kept cut to the budget (start and end), so the
 * latest instruction is never dropped whole.
 */
export function keepUserMessages(entries: readonly HistoryEntry[], count: number, budget: number, countText: TextCounter): KeptUserMessages {
  const candidates: string[] = []
  let omitted = 0
  let omittedTokens = 0
  for (let i = 0; i < count; i++) {
    const entry = entries[i]!
    if (entry.kept) {
      candidates.push(...entry.kept.kept)
      omitted += entry.kept.omitted
      omittedTokens += entry.kept.omittedTokens
    } else if (isPersonMessage(entry.message)) {
      candidates.push(blocksText(entry.message.content))
    }
  }
  const kept: string[] = []
  let used = 0
  let index = candidates.length - 1
  for (; index >= 0; index--) {
    const tokens = countText(candidates[index]!)
    if (used + tokens > budget) break
    kept.push(candidates[index]!)
    used += tokens
  }
  if (kept.length === 0 && index >= 0) {
    kept.push(truncateMiddle(candidates[index]!, budget, countText))
    index--
  }
  for (; index >= 0; index--) {
    omitted++
    omittedTokens += countText(candidates[index]!)
  }
  kept.reverse()
  return { kept, omitted, omittedTokens }
}

/** The text of the last assistant message of the range that has text: its conclusion. */
export function lastConclusion(entries: readonly HistoryEntry[], count: number): string | undefined {
  for (let i = count - 1; i >= 0; i--) {
    const message = entries[i]!.message
    if (message.role !== 'assistant') continue
    let text = ''
    for (const block of message.content) if (block.type === 'text') text += block.text
    if (text.trim()) return text
  }
  return undefined
}

const TODO_MARK: Record<Todo['status'], string> = { completed: 'done', in_progress: 'in progress', pending: 'pending' }

/** What the summary's replacement message says besides the summary itself. */
export interface ReplacementParts {
  readonly summary: string
  /** How many messages and (calibrated) tokens the replacement stands for. */
  readonly messages: number
  readonly tokens: number
  readonly userMessages: KeptUserMessages
  readonly todos?: readonly Todo[]
  readonly conclusion?: string
}

/**
 * The exact text the model sees in place of the compacted history: why it is
 * there and that the task goes on, the summary, the person's messages
 * verbatim (and how many did not fit), the latest todo list and the last
 * conclusion. Documented in the README's "Model experience".
 */
export function replacementText(parts: ReplacementParts): string {
  const sections: string[] = [
    `This conversation was compacted to fit the model's context window: ${plural(parts.messages, 'earlier message')} (about ${parts.tokens.toLocaleString('en-US')} tokens) ${parts.messages === 1 ? 'was' : 'were'} replaced by this summary. The most recent messages follow it verbatim. Continue the work from where it stands.`,
    `## Summary\n\n${parts.summary.trim()}`,
  ]
  const { kept, omitted, omittedTokens } = parts.userMessages
  if (kept.length || omitted) {
    const lines = [`## What the user wrote, verbatim\n\nThe user's messages in the compacted part, oldest first:`]
    kept.forEach((text, i) => lines.push(`[${i + 1}]\n${text}`))
    if (omitted) {
      lines.push(`(${plural(omitted, 'older message')} from the user, about ${omittedTokens.toLocaleString('en-US')} tokens, ${omitted === 1 ? 'was' : 'were'} left out to save space; the summary covers them.)`)
    }
    sections.push(lines.join('\n\n'))
  }
  if (parts.todos && parts.todos.length) {
    sections.push(`## Latest todo list\n\n${parts.todos.map((todo) => `- [${TODO_MARK[todo.status] ?? todo.status}] ${todo.content}`).join('\n')}`)
  }
  if (parts.conclusion) sections.push(`## Your last conclusion before the compaction\n\n${parts.conclusion.trim()}`)
  return sections.join('\n\n')
}

/** The replacement message of a summary. */
export function summaryMessage(parts: ReplacementParts): UserMessage {
  return createUserMessage(replacementText(parts), { source: COMPACTION_SOURCE })
}

/** The text of a pruned tool result's stub. */
export function stubText(name: string, callId: string, characters: number, tokens: number): string {
  return `[Tool result elided by compaction to save context: ${name} (call ${callId}) returned ${characters.toLocaleString('en-US')} characters, about ${tokens.toLocaleString('en-US')} tokens. Call the tool again if you need this output.]`
}

/** The tool names of the calls in `entries[0, count)`, by call id. */
export function callNames(entries: readonly HistoryEntry[], count: number): Map<string, string> {
  const names = new Map<string, string>()
  for (let i = 0; i < count; i++) {
    const message = entries[i]!.message
    if (message.role !== 'assistant') continue
    for (const block of message.content) if (block.type === 'tool-call') names.set(block.id, block.name)
  }
  return names
}

/** A stub for a tool-result message (same call, same error flag), and what it records. */
export function stubResult(message: Message, tokens: number, characters: number, names: ReadonlyMap<string, string>): { message: UserMessage; pruned: PrunedResult } {
  const block = message.content[0] as Extract<ContentBlock, { type: 'tool-result' }>
  const callId = block.toolCallId
  const name = names.get(callId) ?? 'a tool'
  const stub = createToolResultMessage({
    callId: callId as CallId,
    content: stubText(name, callId, characters, tokens),
    ...(block.isError ? { isError: true } : {}),
  })
  return { message: stub, pruned: { callId, name, tokens, characters } }
}

function plural(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`
}
