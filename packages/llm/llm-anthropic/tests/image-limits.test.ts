import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  deepFreeze,
  type GenerateOptions,
  type Message,
} from '@deepseek-ai/dsh-llm'
import { FakeProvider, reply, type Handler } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter, imageLimitDefaults, imageNotes, requestBody, resolveProvider, type ProviderConfig } from '../src'
import { collect, stream, wire } from './support/wire'

const source = { kind: 'model', provider: 'claude', model: 'claude-test' } as const

/** A PNG's signature and IHDR chunk declaring `width`×`height`, padded to `bytes` bytes, as base64. */
function png(width: number, height: number, bytes = 64): string {
  const head = Buffer.alloc(Math.max(bytes, 33))
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0)
  head.writeUInt32BE(13, 8)
  head.write('IHDR', 12, 'latin1')
  head.writeUInt32BE(width, 16)
  head.writeUInt32BE(height, 20)
  head.writeUInt8(8, 24)
  head.writeUInt8(2, 25)
  return head.toString('base64')
}

/** A session in which a screenshot tool returned one image per step, `steps` times: what dsh-mcp passes through. */
function screenshots(steps: number, image: (i: number) => string = () => png(800, 600)): Message[] {
  const messages: Message[] = [createUserMessage('Watch the build and tell me when the page renders.')]
  for (let i = 0; i < steps; i++) {
    const id = CallId(`toolu_${i}`)
    messages.push(createAssistantMessage([{ type: 'tool-call', id, name: 'screenshot', arguments: '{}' }], { source }))
    messages.push(
      createToolResultMessage({
        callId: id,
        content: [
          { type: 'text', text: `shot ${i}` },
          { type: 'image', mediaType: 'image/png', data: image(i) },
        ],
      }),
    )
  }
  return messages
}

type Block = { type: string; text?: string; source?: { data: string }; content?: Block[] }
type Body = { messages: Array<{ role: string; content: Block[] }> }

/** Every image and image note of a body, in order: `img` for an image, the note's text otherwise. */
function imageSlots(body: Body): string[] {
  const out: string[] = []
  const visit = (block: Block) => {
    if (block.type === 'image') out.push('img')
    else if (block.type === 'text' && block.text?.startsWith('[image omitted')) out.push(block.text)
    block.content?.forEach(visit)
  }
  for (const message of body.messages) message.content.forEach(visit)
  return out
}

/**
 * Answers like the Messages API judges images: a request with more than 100
 * images, an image over 5 MB of base64, over 8000 px a side, or over 2000 px
 * a side in a request with more than 20 images is refused with the API's 400
 * `invalid_request_error` (its own wording); anything else streams "ok".
 */
const judgesImages: Handler = async (request, res, closed) => {
  const images: string[] = []
  const visit = (block: Block) => {
    if (block.type === 'image') images.push(block.source!.data)
    block.content?.forEach(visit)
  }
  for (const message of (request.body as Body).messages) message.content.forEach(visit)
  const refuse = (message: string) => reply(400, { type: 'error', error: { type: 'invalid_request_error', message } })(request, res, closed)
  if (images.length > 100) return refuse(`Too much media: 0 document pages + ${images.length} images > 100`)
  for (const data of images) {
    if (data.length > 5 * 1_048_576) return refuse(`image exceeds 5 MB maximum: ${data.length} bytes > 5242880 bytes`)
    const head = Buffer.from(data.slice(0, 32), 'base64')
    const side = Math.max(head.readUInt32BE(16), head.readUInt32BE(20))
    if (side > 8000) return refuse('image dimensions exceed max allowed size: 8000 pixels')
    if (images.length > 20 && side > 2000) return refuse('At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels')
  }
  return stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])(request, res, closed)
}

let server: FakeProvider
beforeEach(async () => {
  server = await FakeProvider.start()
})
afterEach(async () => {
  await server.stop()
})

describe('images past the provider limits', () => {
  it('a session whose tools returned more than 100 images goes on: every request is accepted, and the model reads a note where an image was left out', async () => {
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-images-0123456789' })
    const call = (messages: Message[]) => collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages }))
    for (const steps of [100, 101, 102, 152]) {
      server.handle(judgesImages)
      const history = deepFreeze(screenshots(steps))
      expect({ steps, finish: (await call(history)).at(-1) }).toEqual({ steps, finish: { type: 'finish', reason: { kind: 'stop' } } })
    }
    const last = server.requests.at(-1)!.body as Body
    const note = imageNotes.older(imageLimitDefaults)
    // 152 images: the 101st cut the oldest 51 (50 stay), the 152nd the next 51.
    expect(imageSlots(last)).toEqual([...Array(102).fill(note), ...Array(50).fill('img')])
    expect(note).toBe("[image omitted: earlier images are left out of the request to keep it within the provider's limits (100 images, 24.0 MB); the session still holds it]")
  })

  it('an image too large on its own (bytes, or pixels a side) is replaced by a note saying why; the others still go', async () => {
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-images-0123456789' })
    const huge = 'A'.repeat(5 * 1_048_576 + 4)
    const history = deepFreeze(screenshots(4, (i) => [png(800, 600), huge, png(9000, 300), png(1200, 900)][i]!))
    server.handle(judgesImages)
    const chunks = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    expect(imageSlots(server.requests[0]!.body as Body)).toEqual([
      'img',
      "[image omitted: 5.0 MB, over the provider's limit of 5.0 MB per image]",
      "[image omitted: 9000×300 px, over the provider's limit of 8000 px per side]",
      'img',
    ])
  })

  it('over 20 images, those over 2000 px a side are replaced by a note (the API lowers its limit for many-image requests)', async () => {
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-images-0123456789' })
    const history = deepFreeze(screenshots(21, (i) => (i === 3 ? png(2400, 1800) : png(800, 600))))
    server.handle(judgesImages)
    const chunks = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    const slots = imageSlots(server.requests[0]!.body as Body)
    expect(slots[3]).toBe("[image omitted: 2400×1800 px, over the provider's limit of 2000 px per side in a request with more than 20 images]")
    expect(slots.filter((slot) => slot === 'img')).toHaveLength(20)
  })
})

describe('the request prefix as images accumulate', () => {
  const provider = resolveProvider({ name: 'claude', baseUrl: 'http://127.0.0.1:1', cacheBreakpoints: false })
  const body = (messages: Message[]) => {
    const options: GenerateOptions = { provider: 'claude', model: 'claude-test', messages }
    return requestBody(options, 'claude-test', undefined, provider) as unknown as Body
  }

  it('changes only when a batch of old images is cut (at the 101st, 152nd and 203rd image), and the same history always gives the same bytes', () => {
    const history = deepFreeze(screenshots(220))
    const changedAt: number[] = []
    let previous = body(history.slice(0, 1))
    for (let images = 1; images <= 220; images++) {
      const messages = history.slice(0, 1 + 2 * images)
      const current = body(messages)
      expect(JSON.stringify(body(messages))).toBe(JSON.stringify(current))
      // The earlier request's messages are this request's prefix unless a cut changed them.
      const prefix = current.messages.slice(0, previous.messages.length)
      if (JSON.stringify(prefix) !== JSON.stringify(previous.messages)) changedAt.push(images)
      expect(imageSlots(current).filter((slot) => slot === 'img').length).toBeLessThanOrEqual(100)
      previous = current
    }
    expect(changedAt).toEqual([101, 152, 203])
  })

  it('cuts by bytes too: images that together pass maxTotalBytes are cut in batches of half the budget', () => {
    const small = resolveProvider({ name: 'claude', baseUrl: 'http://127.0.0.1:1', cacheBreakpoints: false, images: { maxTotalBytes: 4_000, maxImageBytes: 1_000 } })
    const history = screenshots(10, () => png(10, 10, 900)) // 1,200 base64 characters each: over maxImageBytes
    const fits = screenshots(10, () => png(10, 10, 600)) // 800 each: five pass 4,000
    const send = (messages: Message[]) => imageSlots(requestBody({ provider: 'claude', model: 'claude-test', messages }, 'claude-test', undefined, small) as unknown as Body)
    expect(send(history).filter((slot) => slot === 'img')).toEqual([])
    const older = imageNotes.older({ ...imageLimitDefaults, maxTotalBytes: 4_000, maxImageBytes: 1_000 })
    // The 6th image (4,800) cuts the oldest until at most 2,000 remain: images 1-4 go, 5 and 6 stay; the 10th cuts 5-8.
    expect(send(fits.slice(0, 1 + 2 * 6))).toEqual([...Array(4).fill(older), 'img', 'img'])
    expect(send(fits.slice(0, 1 + 2 * 9))).toEqual([...Array(4).fill(older), ...Array(5).fill('img')])
    expect(send(fits)).toEqual([...Array(8).fill(older), 'img', 'img'])
  })

  it('leaves the messages it was given unchanged (the session log keeps every image)', () => {
    const history = screenshots(102)
    const before = structuredClone(history)
    body(history)
    expect(history).toEqual(before)
  })
})

describe('image limits in the configuration', () => {
  it('default to the API limits, 600 images for the 1M-window models of the preset; a model overrides per field; a limit that cannot work is refused', () => {
    const resolved = resolveProvider({ preset: 'anthropic', images: { maxTotalBytes: 8_000_000 }, models: { 'claude-opus-5-5': { images: { maxImageBytes: 1_000_000 } } } })
    expect([resolved.images, resolved.models['claude-opus-5-5']!.images, resolved.models['claude-sonnet-5-5']!.images, resolved.models['claude-haiku-4-5']!.images]).toEqual([
      { ...imageLimitDefaults, maxTotalBytes: 8_000_000 },
      { maxImages: 600, maxImageBytes: 1_000_000 },
      { maxImages: 600 },
      undefined,
    ])
    const problem = (images: ProviderConfig['images'], models?: ProviderConfig['models']) => {
      try {
        resolveProvider({ name: 'claude', baseUrl: 'http://127.0.0.1:1', images, ...(models ? { models } : {}) })
        return undefined
      } catch (error) {
        return { code: (error as { code: string }).code, message: (error as Error).message }
      }
    }
    expect([problem({ maxImages: 0 }), problem({ maxImageBytes: 30_000_000 }), problem({}, { m: { images: { manySide: 1.5 } } }), problem({ manyImages: 0 })]).toEqual([
      { code: 'INVALID_PROVIDER_CONFIG', message: 'provider "claude": images.maxImages must be a positive integer, got 0' },
      {
        code: 'INVALID_PROVIDER_CONFIG',
        message: 'provider "claude": images.maxImageBytes (30000000) must not exceed images.maxTotalBytes (25165824): one image must fit in a request',
      },
      { code: 'INVALID_PROVIDER_CONFIG', message: 'provider "claude": models.m.images.manySide must be a positive integer, got 1.5' },
      undefined,
    ])
  })
})

describe('images the API cannot take as declared', () => {
  /** Refuses like the Messages API a media type outside its four, and data whose signature is not its declared type; else streams "ok". */
  const judgesTypes: Handler = async (request, res, closed) => {
    const refuse = (message: string) => reply(400, { type: 'error', error: { type: 'invalid_request_error', message } })(request, res, closed)
    const types: Record<string, string> = { '/9j/': 'image/jpeg', iVBORw0KGgo: 'image/png', R0lGOD: 'image/gif', UklGR: 'image/webp' }
    const images: Array<{ media_type: string; data: string }> = []
    const visit = (block: { type: string; source?: { media_type: string; data: string }; content?: unknown[] }) => {
      if (block.type === 'image') images.push(block.source!)
      ;(block.content as (typeof block)[] | undefined)?.forEach(visit)
    }
    for (const message of (request.body as { messages: Array<{ content: Array<Parameters<typeof visit>[0]> }> }).messages) message.content.forEach(visit)
    for (const { media_type, data } of images) {
      if (!Object.values(types).includes(media_type)) return refuse("image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
      const actual = Object.entries(types).find(([prefix]) => data.startsWith(prefix))?.[1]
      if (actual !== media_type) return refuse(`image.source.base64.data: Image does not match the provided media type ${media_type}`)
    }
    return stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])(request, res, closed)
  }

  it('an image labelled with the wrong type goes with the type its data has; one in a format the API does not take (SVG, BMP, not an image) is replaced by a note', async () => {
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey: 'sk-ant-images-0123456789', cacheBreakpoints: false })
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString('base64')
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')
    const bmp = Buffer.from('BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00', 'latin1').toString('base64')
    const labels: Array<[string, string]> = [
      ['image/png', jpeg],
      ['image/jpg', jpeg],
      ['image/svg+xml', svg],
      ['image/bmp', bmp],
      ['image/png', Buffer.from('not an image at all').toString('base64')],
      ['image/png', png(10, 10)],
    ]
    const history = deepFreeze([
      createUserMessage(labels.map(([mediaType, data]) => ({ type: 'image' as const, mediaType, data }))),
    ])
    server.handle(judgesTypes)
    const chunks = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: history }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    const content = (server.requests[0]!.body as { messages: Array<{ content: Array<{ type: string; text?: string; source?: { media_type: string } }> }> }).messages[0]!.content
    expect(content.map((block) => block.source?.media_type ?? block.text)).toEqual([
      'image/jpeg',
      'image/jpeg',
      "[image omitted: its data (declared image/svg+xml) is not a JPEG, PNG, GIF or WebP image, the formats the provider takes]",
      "[image omitted: its data (declared image/bmp) is not a JPEG, PNG, GIF or WebP image, the formats the provider takes]",
      "[image omitted: its data (declared image/png) is not a JPEG, PNG, GIF or WebP image, the formats the provider takes]",
      'image/png',
    ])
  })
})

describe('a provider that takes no images (DeepSeek behind the Messages API)', () => {
  /** Refuses like DeepSeek's Anthropic-compatible endpoint any image block (its serde wording); else streams "ok". */
  const noImages: Handler = async (request, res, closed) => {
    const raw = JSON.stringify(request.body)
    if (raw.includes('"type":"image"')) {
      const message = 'Failed to deserialize the JSON body into the target type: messages[1].content: unknown variant `image`, expected one of `text`, `tool_use`, `tool_result`, `thinking` at line 1 column 120'
      return reply(400, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } })(request, res, closed)
    }
    return stream([wire.start(), wire.text(0), wire.textDelta(0, 'ok'), wire.stop(0), wire.delta('end_turn'), wire.end()])(request, res, closed)
  }

  it('with the deepseek-anthropic preset, a screenshot a tool returned goes as a note, and the session goes on', async () => {
    const adapter = new AnthropicAdapter({ preset: 'deepseek-anthropic', baseUrl: server.origin, apiKey: 'sk-deepseek-0123456789abcdef' })
    server.handle(noImages)
    const chunks = await collect(adapter.stream({ provider: 'deepseek-anthropic', model: 'deepseek-v4-flash', messages: deepFreeze(screenshots(2)) }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    expect(imageSlots(server.requests[0]!.body as Body)).toEqual(Array(2).fill('[image omitted: image/png; this provider takes no images]'))
  })
})
