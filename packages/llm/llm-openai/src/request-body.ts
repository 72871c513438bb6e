import {
  LlmError,
  type ContentBlock,
  type GenerateOptions,
  type JsonObject,
  type Message,
  type ToolCallBlock,
} from '@deepseek-ai/dsh-llm'
import type { ImageLimits, ModelConfig } from './config'
import { ImageBudget, type WireImage } from './image-budget'
import type { ResolvedProvider } from './provider'

type TextPart = { type: 'text'; text: string }
type UserPart = TextPart | WireImage

/** One chat-completions message, as sent. */
export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | UserPart[] }
  | {
      role: 'assistant'
      content: string | null
      reasoning_content?: string
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
    }
  | { role: 'tool'; tool_call_id: string; content: string }

/** How consecutive text blocks of one message are joined into one string. */
export const textSeparator = '\n\n'

function badRequest(message: string): LlmError {
  return new LlmError({ code: 'BAD_REQUEST', message })
}

/** Text-only content becomes one string (every provider accepts it); images make it a parts array. */
function userContent(parts: UserPart[]): string | UserPart[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p as TextPart).text).join(textSeparator)
  return parts
}

interface Mapping {
  out: WireMessage[]
  images: ImageBudget
  /** User-side parts held back until the run of `tool` messages ends (see `toWireMessages`). */
  pending: UserPart[]
}

function flush(mapping: Mapping): void {
  if (mapping.pending.length === 0) return
  mapping.out.push({ role: 'user', content: userContent(mapping.pending) })
  mapping.pending = []
}

function toolResult(
  mapping: Mapping,
  block: Extract<ContentBlock, { type: 'tool-result' }>,
  where: string,
): void {
  const texts: string[] = []
  const images: WireImage[] = []
  block.content.forEach((inner, i) => {
    if (inner.type === 'text') texts.push(inner.text)
    else if (inner.type === 'image') images.push(mapping.images.image(inner))
    else {
      throw badRequest(
        `${where}.content[${i}] is a "${inner.type}" block inside a tool result; the OpenAI-compatible adapter can send only text and images there`,
      )
    }
  })
  let content = texts.join(textSeparator)
  if (images.length > 0) {
    // Tool messages carry text only; the images follow in a user message after the run of tool messages.
    if (!content) content = `[${images.length} image(s) attached in the next message]`
    mapping.pending.push({ type: 'text', text: `Images returned by tool call ${block.toolCallId}:` }, ...images)
  }
  mapping.out.push({ role: 'tool', tool_call_id: block.toolCallId, content })
}

function userMessage(mapping: Mapping, message: Message, where: string): void {
  const hasToolResult = message.content.some((b) => b.type === 'tool-result')
  const own: UserPart[] = []
  message.content.forEach((block, i) => {
    const at = `${where}.content[${i}]`
    switch (block.type) {
      case 'text':
        own.push({ type: 'text', text: block.text })
        break
      case 'image':
        own.push(mapping.images.image(block))
        break
      case 'tool-result':
        toolResult(mapping, block, at)
        break
      default:
        throw badRequest(
          `${at} is a "${block.type}" block in a user message; the OpenAI-compatible adapter sends only text, image and tool-result blocks there`,
        )
    }
  })
  if (hasToolResult) {
    // The message's own text or images must not split the run of tool messages: send them after it.
    mapping.pending.push(...own)
  } else {
    // Parts held back from tool results open this message, so no two user messages follow each other
    // (several chat templates insist that roles alternate).
    const parts = mapping.pending.length > 0 ? [...mapping.pending, ...own] : own
    mapping.pending = []
    mapping.out.push({ role: 'user', content: userContent(parts) })
  }
}

/** Whether each frozen tool-call block's arguments are a JSON object: history blocks reach every request as the same objects. */
const objectArguments = new WeakMap<ToolCallBlock, boolean>()

/**
 * A tool call's arguments as sent: the model's text byte for byte when it is
 * a JSON object, else `{}`. Arguments cut by max-tokens, broken, empty or not
 * an object stay in the log as the model wrote them (the loop answered the
 * call with an error result), but servers that read the history parse them
 * (vLLM's chat preprocessing, Moonshot) and refuse the whole request, which
 * the history would repeat in every later one. Each block is parsed once.
 */
function wireArguments(block: ToolCallBlock): string {
  let valid = objectArguments.get(block)
  if (valid === undefined) {
    try {
      const parsed: unknown = JSON.parse(block.arguments)
      valid = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    } catch {
      valid = false
    }
    if (Object.isFrozen(block)) objectArguments.set(block, valid)
  }
  return valid ? block.arguments : '{}'
}

function assistantMessage(mapping: Mapping, message: Message, where: string, replayReasoning: boolean): void {
  flush(mapping)
  const texts: string[] = []
  const reasoning: string[] = []
  const calls: NonNullable<Extract<WireMessage, { role: 'assistant' }>['tool_calls']> = []
  message.content.forEach((block, i) => {
    switch (block.type) {
      case 'text':
        texts.push(block.text)
        break
      case 'reasoning':
        // Signatures are never sent: this API has no field for them.
        reasoning.push(block.text)
        break
      case 'tool-call':
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: wireArguments(block) } })
        break
      case 'redacted-reasoning':
        // Another provider's encrypted reasoning (Anthropic): nothing this API can take or a model can read, so dropped.
        break
      default:
        throw badRequest(
          `${where}.content[${i}] is a "${block.type}" block in an assistant message; the OpenAI-compatible adapter sends only text, reasoning and tool-call blocks there`,
        )
    }
  })
  const wire: Extract<WireMessage, { role: 'assistant' }> = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join(textSeparator) : calls.length > 0 ? null : '',
  }
  // DeepSeek's thinking mode refuses an assistant message without the field (`Missing \`reasoning_content\``): one from a
  // model that did not think (a session switched from deepseek-chat, or from another provider) goes with it empty.
  if (replayReasoning) wire.reasoning_content = reasoning.join(textSeparator)
  if (calls.length > 0) wire.tool_calls = calls
  mapping.out.push(wire)
}

/**
 * Maps the conversation to chat-completions messages:
 *
 * - `system` first, when non-empty.
 * - A user message's text blocks become one string joined by a blank line;
 *   with images, a parts array (`text` / `image_url` with a data URL) in block
 *   order.
 * - Each `tool-result` block becomes one `tool` message. Tool messages carry
 *   text only, so images of a tool result, and any other blocks of a message
 *   that holds tool results, are held back until the run of tool messages ends
 *   (providers require the tool messages to follow the assistant's calls
 *   directly): they open the next user message, or form one of their own
 *   before the next assistant message or at the end.
 * - An assistant message becomes `content` (its text, or `null` when it only
 *   calls tools), `tool_calls` (arguments that are not a JSON object go as
 *   `{}`), and `reasoning_content` only when the model is configured with
 *   `replayReasoning` (then on every assistant message, empty when it has no
 *   reasoning).
 * - `source`, message ids, `isError`, reasoning signatures and
 *   `redacted-reasoning` blocks (opaque state of another provider) are not
 *   sent: a conversation that holds them sends the same bytes as one without.
 *   Any block type the adapter does not know is refused with `BAD_REQUEST`
 *   rather than silently dropped.
 * - Images stay within `limits`: an image left out is replaced by a text part
 *   saying why, the oldest first and in batches, as `ImageBudget` describes.
 *   The messages given are not changed.
 */
export function toWireMessages(
  system: string | undefined,
  messages: readonly Message[],
  replayReasoning: boolean,
  limits: Readonly<ImageLimits> = {},
): WireMessage[] {
  const mapping: Mapping = { out: [], images: new ImageBudget(limits), pending: [] }
  if (system) mapping.out.push({ role: 'system', content: system })
  messages.forEach((message, i) => {
    const where = `messages[${i}]`
    if (message.role === 'assistant') assistantMessage(mapping, message, where, replayReasoning)
    else if (message.role === 'user') userMessage(mapping, message, where)
    else throw badRequest(`${where} has role ${JSON.stringify((message as Message).role)}; expected "user" or "assistant"`)
  })
  flush(mapping)
  mapping.images.settle()
  return mapping.out
}

/**
 * Builds the request body. Keys are written in one fixed order whatever the
 * order of `options`, and nothing time- or randomness-dependent is added, so
 * the same call always serializes to the same bytes and the provider's prompt
 * cache can match the prefix. Extra body fields (provider, then model) are
 * written last and may override the adapter's own fields.
 */
export function requestBody(
  options: GenerateOptions,
  model: string,
  caps: Readonly<ModelConfig> | undefined,
  provider: ResolvedProvider,
): JsonObject {
  const body: Record<string, unknown> = {
    model,
    messages: toWireMessages(options.system, options.messages, caps?.replayReasoning === true, caps?.images ? { ...provider.images, ...caps.images } : provider.images),
  }
  if (options.tools && options.tools.length > 0) {
    body.tools = options.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  if (options.reasoningEffort) body.reasoning_effort = options.reasoningEffort
  if (options.maxTokens !== undefined) body[provider.maxTokensParam] = options.maxTokens
  if (options.temperature !== undefined) body.temperature = options.temperature
  body.stream = true
  if (provider.streamUsage) body.stream_options = { include_usage: true }
  Object.assign(body, provider.extraBody, caps?.extraBody)
  return body as JsonObject
}
