import { isFromRoute, LlmError, type ContentBlock, type GenerateOptions, type JsonObject, type Message } from '@deepseek-ai/dsh-llm'
import type { ImageLimits, ModelConfig } from './config'
import { ImageBudget, imageLimitDefaults } from './image-budget'
import type { ResolvedProvider } from './provider'
import { ToolIds } from './tool-ids'

/** A prompt-cache breakpoint: the prefix up to and including the block that carries it is cached. */
export const EPHEMERAL = { type: 'ephemeral' } as const

type Cache = { cache_control?: typeof EPHEMERAL }
type ImageSource = { type: 'base64'; media_type: string; data: string }

/** One content block of a Messages API request, as sent. */
export type WireBlock =
  | ({ type: 'text'; text: string } & Cache)
  | ({ type: 'image'; source: ImageSource } & Cache)
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | ({ type: 'tool_use'; id: string; name: string; input: JsonObject } & Cache)
  | ({ type: 'tool_result'; tool_use_id: string; content?: Array<Extract<WireBlock, { type: 'text' | 'image' }>>; is_error?: true } & Cache)

/** One message of a Messages API request, as sent. */
export interface WireMessage {
  role: 'user' | 'assistant'
  content: WireBlock[]
}

/**
 * Whether a text block may be sent: the API refuses a text block that is
 * empty or only whitespace anywhere in the request (`text content blocks
 * must contain non-whitespace text`), and the history would carry it into
 * every later request. Such a block says nothing, so it is left out. Stops
 * at the first character that is not whitespace.
 */
const NON_BLANK = /\S/
const sendable = (text: string): boolean => NON_BLANK.test(text)

function badRequest(message: string): LlmError {
  return new LlmError({ code: 'BAD_REQUEST', message })
}

/**
 * A tool call's arguments as the `input` object the API wants. Arguments that
 * are not a JSON object (a model that streamed broken JSON, which the loop
 * answered with an error result) go as `{}`: the call stays paired with its
 * result, and the same history always gives the same bytes.
 */
function toolInput(args: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(args)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as JsonObject) : {}
  } catch {
    return {}
  }
}

/** What one request's mapping carries from message to message: its images and its tool call ids. */
interface Walk {
  images: ImageBudget
  ids: ToolIds
}

function toolResult(block: Extract<ContentBlock, { type: 'tool-result' }>, where: string, walk: Walk): WireBlock {
  const content: Array<Extract<WireBlock, { type: 'text' | 'image' }>> = []
  block.content.forEach((inner, i) => {
    if (inner.type === 'text') {
      if (sendable(inner.text)) content.push({ type: 'text', text: inner.text })
    } else if (inner.type === 'image') content.push(walk.images.image(inner))
    else throw badRequest(`${where}.content[${i}] is a "${inner.type}" block inside a tool result; the Anthropic adapter can send only text and images there`)
  })
  const out: WireBlock = { type: 'tool_result', tool_use_id: walk.ids.result(block.toolCallId) }
  if (content.length > 0) out.content = content
  if (block.isError) out.is_error = true
  return out
}

function userBlocks(message: Message, where: string, walk: Walk): WireBlock[] {
  const results: WireBlock[] = []
  const rest: WireBlock[] = []
  message.content.forEach((block, i) => {
    const at = `${where}.content[${i}]`
    if (block.type === 'tool-result') results.push(toolResult(block, at, walk))
    else if (block.type === 'text') {
      if (sendable(block.text)) rest.push({ type: 'text', text: block.text })
    } else if (block.type === 'image') rest.push(walk.images.image(block))
    else throw badRequest(`${at} is a "${block.type}" block in a user message; the Anthropic adapter sends only text, image and tool-result blocks there`)
  })
  // The API wants the tool results first in the message that answers the calls.
  return results.concat(rest)
}

function assistantBlocks(message: Message, where: string, sameRoute: boolean, ids: ToolIds): WireBlock[] {
  const out: WireBlock[] = []
  message.content.forEach((block, i) => {
    switch (block.type) {
      case 'text':
        if (sendable(block.text)) out.push({ type: 'text', text: block.text })
        break
      case 'reasoning':
        // Thinking goes back only with its signature, and only to the model that signed it.
        if (sameRoute && block.signature) out.push({ type: 'thinking', thinking: block.text, signature: block.signature })
        break
      case 'redacted-reasoning':
        if (sameRoute) out.push({ type: 'redacted_thinking', data: block.data })
        break
      case 'tool-call':
        out.push({ type: 'tool_use', id: ids.call(block.id), name: block.name, input: toolInput(block.arguments) })
        break
      default:
        throw badRequest(`${where}.content[${i}] is a "${block.type}" block in an assistant message; the Anthropic adapter sends only text, reasoning and tool-call blocks there`)
    }
  })
  return out
}

/**
 * Maps the conversation to Messages API messages:
 *
 * - Every message's content is a block array. Text blocks that are empty or
 *   only whitespace are left out (the API refuses them), and a message left
 *   with no block is left out.
 * - Consecutive messages of one role become one message (tool results and
 *   the user text that follows them), tool results first.
 * - Reasoning goes back as `thinking` with its signature, and
 *   `redacted-reasoning` as `redacted_thinking`, only on an assistant message
 *   of this provider and model (`isFromRoute`); reasoning without a signature,
 *   or of another route, is not sent.
 * - Images stay within `limits` (the API's documented ones by default): an
 *   image left out is replaced by a text note saying why, the oldest first and
 *   in batches, as `ImageBudget` describes. The messages given are not changed.
 * - Tool call ids the API would refuse (characters outside its pattern, an id
 *   used twice) are mapped to ones it takes, calls and results alike
 *   (`ToolIds`).
 * - Message ids and `source` are never sent; an unknown block type is refused
 *   with `BAD_REQUEST`, never dropped.
 */
export function toWireMessages(
  messages: readonly Message[],
  provider: string,
  model: string,
  limits: Readonly<Required<ImageLimits>> = imageLimitDefaults,
): WireMessage[] {
  const out: WireMessage[] = []
  const walk: Walk = { images: new ImageBudget(limits), ids: new ToolIds() }
  messages.forEach((message, i) => {
    const where = `messages[${i}]`
    let content: WireBlock[]
    if (message.role === 'user') content = userBlocks(message, where, walk)
    else if (message.role === 'assistant') content = assistantBlocks(message, where, isFromRoute(message, provider, model), walk.ids)
    else throw badRequest(`${where} has role ${JSON.stringify((message as Message).role)}; expected "user" or "assistant"`)
    if (content.length === 0) return
    const previous = out[out.length - 1]
    if (previous?.role === message.role) {
      previous.content = message.role === 'user' ? mergeUser(previous.content, content) : previous.content.concat(content)
    } else out.push({ role: message.role, content })
  })
  walk.images.settle()
  return out
}

function mergeUser(a: WireBlock[], b: WireBlock[]): WireBlock[] {
  const results = (blocks: WireBlock[]) => blocks.filter((block) => block.type === 'tool_result')
  const others = (blocks: WireBlock[]) => blocks.filter((block) => block.type !== 'tool_result')
  return [...results(a), ...results(b), ...others(a), ...others(b)]
}

/** Marks the last block of `message` that may carry a breakpoint (thinking blocks may not). */
function markLast(message: WireMessage | undefined): void {
  if (message === undefined) return
  for (let i = message.content.length - 1; i >= 0; i--) {
    const block = message.content[i]!
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue
    message.content[i] = { ...block, cache_control: EPHEMERAL }
    return
  }
}

/**
 * Places the two message breakpoints: on the last message (this request's
 * whole prefix is written to the cache), and on the last user message before
 * the last assistant message, which is where the previous step's request
 * ended, so this request reads exactly what that step wrote however many
 * blocks the step added (the API looks back only about 20 blocks from a
 * breakpoint for an earlier entry).
 */
export function placeMessageBreakpoints(messages: WireMessage[]): void {
  if (messages.length === 0) return
  let lastAssistant = -1
  for (let i = messages.length - 1; i >= 0 && lastAssistant < 0; i--) if (messages[i]!.role === 'assistant') lastAssistant = i
  let previousEnd = -1
  for (let i = lastAssistant - 1; i >= 0 && previousEnd < 0; i--) if (messages[i]!.role === 'user') previousEnd = i
  markLast(messages[messages.length - 1])
  if (previousEnd >= 0 && previousEnd !== messages.length - 1) markLast(messages[previousEnd])
}

/** The `thinking` and `output_config` fields for the call's effort, as the model's `thinking` mode says. */
function thinkingFields(effort: string | undefined, caps: Readonly<ModelConfig> | undefined, maxTokens: number): Record<string, unknown> {
  switch (caps?.thinking) {
    case 'adaptive':
      return effort ? { thinking: { type: 'adaptive' }, output_config: { effort } } : { thinking: { type: 'adaptive' } }
    case 'effort':
      return effort ? { output_config: { effort } } : {}
    case 'budget': {
      const budget = effort ? caps.thinkingBudgets?.[effort] : undefined
      // The budget must stay under max_tokens and at or over the API's 1,024.
      const tokens = budget === undefined ? undefined : Math.min(budget, maxTokens - 1)
      return tokens !== undefined && tokens >= 1_024 ? { thinking: { type: 'enabled', budget_tokens: tokens } } : {}
    }
    default:
      return {}
  }
}

/**
 * Builds the request body. Keys are written in one fixed order whatever the
 * order of `options`, and nothing time- or randomness-dependent is added, so
 * the same call always serializes to the same bytes. With `cacheBreakpoints`,
 * at most four `cache_control` breakpoints: the last tool, the system prompt,
 * and the two of `placeMessageBreakpoints`. Extra body fields (provider, then
 * model) are written last and may override the adapter's own fields.
 */
export function requestBody(options: GenerateOptions, model: string, caps: Readonly<ModelConfig> | undefined, provider: ResolvedProvider): JsonObject {
  const cache = provider.cacheBreakpoints
  const requested = options.maxTokens ?? provider.defaultMaxTokens
  const maxTokens = caps?.maxOutputTokens !== undefined ? Math.min(requested, caps.maxOutputTokens) : requested
  const body: Record<string, unknown> = { model, max_tokens: maxTokens }
  if (options.system) body.system = [cache ? { type: 'text', text: options.system, cache_control: EPHEMERAL } : { type: 'text', text: options.system }]
  if (options.tools && options.tools.length > 0) {
    const last = options.tools.length - 1
    body.tools = options.tools.map((tool, i) => {
      const wire: Record<string, unknown> = { name: tool.name, description: tool.description, input_schema: tool.parameters }
      if (cache && i === last) wire.cache_control = EPHEMERAL
      return wire
    })
  }
  const messages = toWireMessages(options.messages, options.provider, model, caps?.images ? { ...provider.images, ...caps.images } : provider.images)
  if (cache) placeMessageBreakpoints(messages)
  body.messages = messages
  Object.assign(body, thinkingFields(options.reasoningEffort, caps, maxTokens))
  if (options.temperature !== undefined) body.temperature = options.temperature
  body.stream = true
  Object.assign(body, provider.extraBody, caps?.extraBody)
  return body as JsonObject
}
