import { createAssembler, createUserMessage, LlmError, type PreparedCall, type TokenUsage } from '@deepseek-ai/dsh-llm'
import { CompactionError } from './errors'
import type { HistoryEntry } from './meter'
import { blocksText, isPersonMessage, stubText, truncateMiddle, type TextCounter } from './replacement'

/**
 * The system text of every summary request. The summary replaces the
 * conversation for the agent that continues it, so it asks for what that
 * agent needs to go on: the goal, the decisions, the files, the open work and
 * the latest request, with exact names kept.
 */
export const SUMMARY_SYSTEM_PROMPT = [
  'You summarize a conversation between a user and an AI agent that uses tools. The agent will continue the work with your summary in place of the conversation, so it must be able to go on without asking what happened.',
  'Write in the language of the conversation, as short notes under these headings:',
  '- Goal: what the user wants overall.',
  '- Decisions: what was decided or agreed, and why.',
  '- Files and code: every file, path, command, name or setting that was read, created or changed, with what changed.',
  '- State: what has been done and verified so far, including results and errors worth remembering.',
  '- Open work: what remains to do, in order.',
  "- Latest request: the user's last request and how far it got.",
  'Keep exact identifiers, paths, numbers and error messages. Do not invent anything, do not address the user, and do not repeat these instructions.',
].join('\n')

/** One rendered piece of the conversation for the summarizer. */
interface Item {
  text: string
  tokens: number
  /** The stub to use instead when the range must be pruned to fit. */
  stub?: string
}

export interface SummarizeOptions {
  readonly entries: readonly HistoryEntry[]
  readonly count: number
  readonly names: ReadonlyMap<string, string>
  readonly instructions?: string
  readonly call: PreparedCall
  /** Tokens (uncalibrated units) the conversation text of one request may take. */
  readonly inputBudget: number
  /** Tokens the summary may take (the call's `maxTokens`). */
  readonly summaryTokens: number
  /** Tool results of at least this size are pruned first when the range does not fit one request. */
  readonly pruneMinTokens: number
  readonly countText: TextCounter
  readonly signal: AbortSignal
}

export interface SummaryOutcome {
  readonly summary: string
  readonly usage: TokenUsage
  readonly calls: number
}

/** How many times a summary refused as too long (`CONTEXT_OVERFLOW`) is tried again with half the input budget. */
const OVERFLOW_RETRIES = 3
/** The smallest input budget a retry goes down to: below it the request's own text (prompt, instructions) is what does not fit. */
const MIN_RETRY_BUDGET = 256

/**
 * Summarizes `entries[0, count)` with the prepared call (R-CMP-4): one request
 * when the rendered range fits `inputBudget`; otherwise its large tool
 * results are pruned to stubs first, and what still does not fit is cut into
 * chunks summarized in turn, each request carrying the summary so far. A
 * request the provider refuses as too long (`CONTEXT_OVERFLOW`: the estimate
 * undercounts its text, as with CJK or code) starts the summary over with half
 * the budget, up to `OVERFLOW_RETRIES` times. The requests and answers never
 * enter the agent's history; their usage is summed and every call counted.
 * Throws `CompactionError` (`ABORTED`, `SUMMARY_FAILED`).
 */
export async function summarize(options: SummarizeOptions): Promise<SummaryOutcome> {
  const usage: Required<Pick<TokenUsage, 'inputTokens' | 'outputTokens'>> & TokenUsage = { inputTokens: 0, outputTokens: 0 }
  const tally = { calls: 0 }
  let budget = options.inputBudget
  for (let retry = 0; ; retry++) {
    try {
      const summary = await summarizeWithin(options, budget, usage, tally)
      return { summary, usage, calls: tally.calls }
    } catch (error) {
      if (!(error instanceof CompactionError) || !isOverflow(error) || retry >= OVERFLOW_RETRIES || budget < 2 * MIN_RETRY_BUDGET || options.signal.aborted) throw error
      budget = Math.floor(budget / 2)
    }
  }
}

/** One pass over the range within `budget`; adds to `usage` and `tally.calls`; returns the last summary. */
async function summarizeWithin(options: SummarizeOptions, budget: number, usage: TokenUsage, tally: { calls: number }): Promise<string> {
  const items = render(options)
  let total = 0
  for (const item of items) total += item.tokens
  if (total > budget) {
    total = 0
    for (const item of items) {
      if (item.stub !== undefined) {
        item.text = item.stub
        item.tokens = options.countText(item.stub)
      }
      total += item.tokens
    }
  }
  const chunks = total <= budget ? [items] : split(items, Math.max(Math.floor(budget / 2), budget - options.summaryTokens), options.countText)
  let summary = ''
  for (let i = 0; i < chunks.length; i++) {
    const text = requestText(chunks[i]!, i, chunks.length, summary, options.instructions)
    tally.calls++
    const answer = await callOnce(options.call, text, options.signal)
    addUsage(usage, answer.usage)
    summary = answer.text
  }
  return summary
}

/** Whether a summary call failed because its request did not fit the model's window. */
function isOverflow(error: CompactionError): boolean {
  return error.cause instanceof LlmError && error.cause.code === 'CONTEXT_OVERFLOW'
}

/** The user message of summary request `index` of `total`. */
function requestText(items: readonly Item[], index: number, total: number, previous: string, instructions: string | undefined): string {
  const parts: string[] = []
  if (index > 0) parts.push(`The summary of the earlier parts of the conversation so far:\n\n<summary>\n${previous}\n</summary>`)
  parts.push(`Here is ${total > 1 ? `part ${index + 1} of ${total} of ` : ''}the conversation to summarize:\n\n<conversation>\n${items.map((item) => item.text).join('\n\n')}\n</conversation>`)
  if (instructions && instructions.trim()) parts.push(`Additional instructions for this summary:\n${instructions.trim()}`)
  parts.push(index > 0 ? 'Write the summary now, merging the summary so far with this part.' : 'Write the summary now.')
  return parts.join('\n\n')
}

/** The range as labelled text items, one per message (reasoning left out: it is the model's own scratch work). */
function render(options: SummarizeOptions): Item[] {
  const { entries, count, names, countText, pruneMinTokens } = options
  const items: Item[] = []
  const push = (text: string, stub?: string) => {
    const item: Item = { text, tokens: countText(text) }
    if (stub !== undefined && item.tokens >= pruneMinTokens) item.stub = stub
    items.push(item)
  }
  for (let i = 0; i < count; i++) {
    const entry = entries[i]!
    const message = entry.message
    if (message.role === 'assistant') {
      const lines: string[] = []
      let text = ''
      for (const block of message.content) {
        if (block.type === 'text') text += block.text
        else if (block.type === 'tool-call') lines.push(`[Assistant called ${block.name} (call ${block.id}) with ${block.arguments}]`)
      }
      if (text.trim()) lines.unshift(`[Assistant]\n${text}`)
      if (lines.length) push(lines.join('\n'))
      continue
    }
    const first = message.content[0]
    if (message.content.length === 1 && first?.type === 'tool-result') {
      const name = names.get(first.toolCallId) ?? 'a tool'
      const body = blocksText(first.content)
      push(
        `[Result of ${name} (call ${first.toolCallId})${first.isError ? ', an error' : ''}]\n${body}`,
        `[Result of ${name} (call ${first.toolCallId})${first.isError ? ', an error' : ''}]\n${stubText(name, first.toolCallId, body.length, countText(body))}`,
      )
      continue
    }
    const body = blocksText(message.content)
    if (entry.kept) push(`[Summary of the conversation before this point]\n${body}`)
    else if (isPersonMessage(message)) push(`[User]\n${body}`)
    else push(`[Context${message.source.kind === 'plugin' ? ` from ${message.source.plugin}` : ''}]\n${body}`)
  }
  return items
}

/** Greedy chunks of at most `budget` tokens; an item larger than a chunk is cut to fit one. */
function split(items: readonly Item[], budget: number, countText: TextCounter): Item[][] {
  const chunks: Item[][] = []
  let current: Item[] = []
  let used = 0
  for (const original of items) {
    let item = original
    if (item.tokens > budget) {
      const text = truncateMiddle(item.text, budget, countText)
      item = { text, tokens: countText(text) }
    }
    if (used + item.tokens > budget && current.length) {
      chunks.push(current)
      current = []
      used = 0
    }
    current.push(item)
    used += item.tokens
  }
  if (current.length) chunks.push(current)
  return chunks
}

/** One summary request: its answer's text and usage. */
async function callOnce(call: PreparedCall, text: string, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage | undefined }> {
  const route = `${call.config.provider}/${call.config.model}`
  if (signal.aborted) throw aborted(route, signal)
  const assembler = createAssembler()
  try {
    for await (const chunk of call.stream({ system: SUMMARY_SYSTEM_PROMPT, messages: [createUserMessage(text)], signal })) {
      if (signal.aborted) break
      assembler.push(chunk)
    }
  } catch (error) {
    if (signal.aborted) throw aborted(route, signal)
    throw new CompactionError('SUMMARY_FAILED', `the summary call to ${route} failed: ${error instanceof Error ? error.message : String(error)}; nothing was compacted`, { cause: error })
  }
  if (signal.aborted) throw aborted(route, signal)
  const result = assembler.result()
  const finish = result.finishReason
  if (finish.kind === 'error' || finish.kind === 'aborted') {
    const failure = finish.failure ?? { code: 'ABORTED' as const, message: 'the provider aborted the call' }
    throw new CompactionError('SUMMARY_FAILED', `the summary call to ${route} failed (${failure.code}: ${failure.message}); nothing was compacted`, {
      cause: new LlmError(failure),
    })
  }
  if (finish.kind === 'max-tokens') {
    // The answer stopped mid-way: what the prompt asks for last (the open work, the latest request) is
    // missing, and a summary replaces what it summarizes for good (R-CMP-7: a failed summary loses nothing).
    const limit = call.config.maxTokens === undefined ? '' : ` (${call.config.maxTokens.toLocaleString('en-US')} tokens)`
    throw new CompactionError(
      'SUMMARY_FAILED',
      `the summary call to ${route} stopped at its token limit${limit} before the summary was complete; nothing was compacted. Raise summaryMaxTokens (a reasoning model spends part of it thinking)`,
    )
  }
  let answer = ''
  for (const block of result.content) if (block.type === 'text') answer += block.text
  if (!answer.trim()) {
    throw new CompactionError('SUMMARY_FAILED', `the summary call to ${route} answered no text (finish: ${finish.kind}); nothing was compacted`)
  }
  return { text: answer.trim(), usage: result.usage }
}

function aborted(route: string, signal: AbortSignal): CompactionError {
  return new CompactionError('ABORTED', `the summary call to ${route} was aborted; nothing was compacted`, { cause: signal.reason })
}

function addUsage(total: TokenUsage, usage: TokenUsage | undefined): void {
  if (!usage) return
  total.inputTokens += usage.inputTokens
  total.outputTokens += usage.outputTokens
  if (usage.cacheReadTokens !== undefined) total.cacheReadTokens = (total.cacheReadTokens ?? 0) + usage.cacheReadTokens
  if (usage.cacheWriteTokens !== undefined) total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + usage.cacheWriteTokens
  if (usage.reasoningTokens !== undefined) total.reasoningTokens = (total.reasoningTokens ?? 0) + usage.reasoningTokens
}
