import { imageFormat, imageMediaType, safeEnd, safeStart, type ContentBlock, type TextBlock } from '@deepseek-ai/dsh-llm'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { callError } from './errors'
import type { Redactor } from './redact'
import { wellFormed } from './well-formed'

/** How much of one result reaches the model. */
export interface ResultLimits {
  /** Characters of text, all blocks together; longer blocks keep their head and tail. */
  readonly maxOutputChars: number
  /** Bytes of one image (decoded); a larger one is replaced by a line saying so. */
  readonly maxImageBytes: number
}

type McpContent = CallToolResult['content'][number]

/**
 * Maps an MCP tool result to what the model reads (R-MCP-2): text blocks
 * stay text; images become image blocks; an embedded text resource becomes
 * text under a `[resource <uri>]` line, an embedded image resource an image,
 * other binary resources, audio and resource links a line that names them;
 * a result with no content but `structuredContent` becomes that JSON as
 * text. Every text is made well-formed (no lone surrogate) and passes the
 * server's redactor first; then text is capped
 * at `maxOutputChars` over the whole result, the notes of what was cut
 * included (over the cap, adjacent text blocks are joined and each long run
 * keeps its head and tail around a note), images at `maxImageBytes`.
 *
 * `isError: true` throws a `TOOL_ERROR` whose message is the result's text,
 * so the model reads `Error: <what the server said>`.
 */
export function toToolOutput(result: CallToolResult, limits: ResultLimits, redactor: Redactor): readonly ContentBlock[] {
  const content: readonly McpContent[] = Array.isArray(result.content) ? result.content : []
  let blocks: ContentBlock[] = []
  for (const item of content) blocks.push(...mapContent(item, limits))
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) })
  }
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!
    if (block.type === 'text') blocks[i] = { type: 'text', text: wellFormed(block.text) }
  }
  // Redacted before the cut: a cut inside a secret would leave its two pieces, which no longer match it.
  if (!redactor.empty) {
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i]!
      if (block.type === 'text') blocks[i] = { type: 'text', text: redactor.redact(block.text) }
    }
  }
  blocks = capText(blocks, limits.maxOutputChars)
  if (result.isError === true) {
    const text = blocks
      .filter((block): block is TextBlock => block.type === 'text')
      .map((block) => block.text)
      .join('\n')
    throw callError('TOOL_ERROR', text.length > 0 ? text : 'the MCP tool reported an error without a message')
  }
  if (blocks.length === 0) blocks.push({ type: 'text', text: '[the tool returned no content]' })
  return blocks
}

function mapContent(item: McpContent, limits: ResultLimits): ContentBlock[] {
  switch (item.type) {
    case 'text':
      return [{ type: 'text', text: item.text }]
    case 'image':
      return [image(item.mimeType, item.data, limits, 'image')]
    case 'audio':
      return [{ type: 'text', text: `[${item.mimeType} audio of ${size(base64Bytes(item.data))} not shown: the model reads text and images only]` }]
    case 'resource_link':
      return [{ type: 'text', text: `[resource link: ${item.name} <${item.uri}>${item.mimeType ? ` (${item.mimeType})` : ''}${item.description ? ` ${item.description}` : ''}]` }]
    case 'resource': {
      const resource = item.resource
      const mime = resource.mimeType ? ` (${resource.mimeType})` : ''
      if ('text' in resource && typeof resource.text === 'string') return [{ type: 'text', text: `[resource ${resource.uri}${mime}]\n${resource.text}` }]
      if ('blob' in resource && typeof resource.blob === 'string') {
        if (resource.mimeType?.startsWith('image/')) return [image(resource.mimeType, resource.blob, limits, `resource ${resource.uri}`)]
        if (resource.mimeType !== undefined && isTextual(resource.mimeType)) {
          return [{ type: 'text', text: `[resource ${resource.uri}${mime}]\n${Buffer.from(resource.blob, 'base64').toString('utf8')}` }]
        }
        return [{ type: 'text', text: `[resource ${resource.uri}${mime}: ${size(base64Bytes(resource.blob))} of binary data not shown]` }]
      }
      return [{ type: 'text', text: `[resource ${resource.uri}${mime}]` }]
    }
    default:
      return [{ type: 'text', text: `[content of type ${JSON.stringify((item as { type?: unknown }).type)} not shown]` }]
  }
}

/**
 * The image types every provider dsh targets reads. Anthropic refuses a
 * request with any other (`image/svg+xml`, `image/bmp`, the unregistered
 * `image/jpg`…), and a tool result stays in every later request of the
 * session, so one such image would make the session unusable.
 */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

function image(mediaType: string, data: string, limits: ResultLimits, what: string): ContentBlock {
  const bytes = base64Bytes(data)
  let type = imageMediaType(mediaType)
  // A label that does not match the bytes (a JPEG sent as PNG) is refused too: the bytes decide.
  if (IMAGE_TYPES.has(type)) type = imageFormat(data) ?? type
  if (!IMAGE_TYPES.has(type)) {
    // SVG (and any other XML or text image) is source the model can read.
    if (isTextual(type)) return { type: 'text', text: `[${what}: ${type}, shown as its source]\n${Buffer.from(data, 'base64').toString('utf8')}` }
    return { type: 'text', text: `[${what}: ${mediaType} image of ${size(bytes)} not shown: the model reads PNG, JPEG, GIF and WebP images]` }
  }
  if (bytes > limits.maxImageBytes) {
    return { type: 'text', text: `[${what}: ${mediaType} image of ${size(bytes)} not shown: larger than the ${size(limits.maxImageBytes)} limit]` }
  }
  return { type: 'image', mediaType: type, data }
}

/** Whether a MIME type is text a model can read (a blob of it is decoded as UTF-8). */
function isTextual(mime: string): boolean {
  const type = mime.split(';')[0]!.trim().toLowerCase()
  return type.startsWith('text/') || type === 'application/json' || type === 'application/xml' || type.endsWith('+json') || type.endsWith('+xml')
}

/** The decoded size of a base64 text. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * Text blocks cut so that their characters, the notes of what was cut
 * included, add up to at most `max`. Over the cap, each run of adjacent text
 * blocks is first joined into one (by a newline: to the model they are one
 * text either way), so a result of thousands of small blocks gets one note,
 * not one per block. Then the runs under an equal share stay whole and the
 * rest share what is left (water filling), each keeping its first and last
 * halves around a note.
 */
function capText(input: ContentBlock[], max: number): ContentBlock[] {
  let total = 0
  for (const block of input) if (block.type === 'text') total += block.text.length
  if (total <= max) return input
  const blocks: ContentBlock[] = []
  for (const block of input) {
    const last = blocks[blocks.length - 1]
    if (block.type === 'text' && last?.type === 'text') blocks[blocks.length - 1] = { type: 'text', text: `${last.text}\n${block.text}` }
    else blocks.push(block)
  }
  const order = blocks.flatMap((block, index) => (block.type === 'text' ? [{ length: block.text.length, index }] : []))
  order.sort((a, b) => a.length - b.length)
  const allowance = new Map<number, number>()
  let budget = max
  for (let i = 0; i < order.length; i++) {
    const share = Math.floor(budget / (order.length - i))
    const { length, index } = order[i]!
    const given = Math.min(length, share)
    allowance.set(index, given)
    budget -= given
  }
  return blocks.map((block, index) => {
    if (block.type !== 'text') return block
    const keep = allowance.get(index) ?? block.text.length
    return keep >= block.text.length ? block : { type: 'text', text: cutMiddle(block.text, keep) }
  })
}

function cutNote(cut: number): string {
  return `\n[… ${cut} characters cut from the middle of this result …]\n`
}

/** The head and tail of `text` around a note, `keep` characters in all (the note alone when `keep` cannot hold it). */
function cutMiddle(text: string, keep: number): string {
  // The note for the whole text is at least as long as the one written.
  const own = Math.max(0, keep - cutNote(text.length).length)
  const headEnd = safeEnd(text, Math.ceil(own / 2))
  const tailStart = safeStart(text, text.length - Math.floor(own / 2))
  return `${text.slice(0, headEnd)}${cutNote(tailStart - headEnd)}${text.slice(tailStart)}`
}

