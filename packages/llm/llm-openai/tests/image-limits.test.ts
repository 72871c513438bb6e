import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, deepFreeze, type Message } from '@deepseek-ai/dsh-llm'
import { FakeProvider, openAiChunk as chunk, reply, sse, type Handler } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { imageNotes, OpenAiAdapter, resolveProvider, type ProviderConfig } from '../src'
import { requestBody } from '../src/request-body'
import { collect } from './support/collect'

const source = { kind: 'model', provider: 'openai', model: 'gpt-4.1' } as const
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

/** A session in which a screenshot tool returned one image per step, `steps` times (what dsh-mcp passes through). */
function screenshots(steps: number, image: (i: number) => string = () => pixel): Message[] {
  const messages: Message[] = [createUserMessage('Watch the build and tell me when the page renders.')]
  for (let i = 0; i < steps; i++) {
    const id = CallId(`call_${i}`)
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

type Part = { type: string; text?: string; image_url?: { url: string } }
type Body = { messages: Array<{ role: string; content: string | Part[] | null }> }

/** Every image and image note of a body, in order: `img` for an image, the note's text otherwise. */
function imageSlots(body: Body): string[] {
  const out: string[] = []
  for (const message of body.messages) {
    // A message whose images were all replaced while mapping is text only, and goes as one string.
    if (typeof message.content === 'string') out.push(...(message.content.match(/\[image omitted[^\]]*\]/g) ?? []))
    if (!Array.isArray(message.content)) continue
    for (const part of message.content) {
      if (part.type === 'image_url') out.push('img')
      else if (part.text?.startsWith('[image omitted')) out.push(part.text)
    }
  }
  return out
}

/**
 * Answers like OpenAI's chat completions judge images (the vision guide's
 * limits: 500 images, 50 MB of images, 20 MB each), refusing with a 400
 * `invalid_request_error` (the message's wording is this test's); anything
 * else streams "ok".
 */
const judgesImages: Handler = async (request, res, closed) => {
  const images = (request.body as Body).messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url') : []))
  const bytes = images.map((p) => p.image_url!.url.length - p.image_url!.url.indexOf(',') - 1)
  const refuse = (message: string) =>
    reply(400, { error: { message, type: 'invalid_request_error', param: 'messages', code: null } })(request, res, closed)
  if (images.length > 500) return refuse(`Too many images: ${images.length} > 500`)
  if (bytes.some((b) => b > 20_000_000)) return refuse('Image exceeds the 20 MB limit')
  if (bytes.reduce((a, b) => a + b, 0) > 50_000_000) return refuse('Images exceed the 50 MB limit per request')
  return sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')])(request, res, closed)
}

let server: FakeProvider
beforeEach(async () => {
  server = await FakeProvider.start()
})
afterEach(async () => {
  await server.stop()
})

describe('images past the provider limits', () => {
  it('a session whose tools returned more than 500 images goes on with the OpenAI preset: every request is accepted, and the model reads a note where an image was left out', async () => {
    const adapter = new OpenAiAdapter({ preset: 'openai', baseUrl: server.url, apiKey: 'sk-images-0123456789abcdef' })
    for (const steps of [500, 501, 502]) {
      server.handle(judgesImages)
      const chunks = await collect(adapter.stream({ provider: 'openai', model: 'gpt-4.1', messages: deepFreeze(screenshots(steps)) }))
      expect({ steps, finish: chunks.at(-1) }).toEqual({ steps, finish: { type: 'finish', reason: { kind: 'stop' } } })
    }
    const note = imageNotes.older({ maxImages: 500, maxTotalBytes: 50_000_000 })
    expect(note).toBe("[image omitted: earlier images are left out of the request to keep it within the provider's limits (500 images, 50.0 MB); the session still holds it]")
    // The 501st image cut the oldest 251 (250 stayed); the 502nd joined them.
    expect(imageSlots(server.requests.at(-1)!.body as Body)).toEqual([...Array(251).fill(note), ...Array(251).fill('img')])
  })

  it('an image over 20 MB is replaced by a note saying why; the other images still go', async () => {
    const adapter = new OpenAiAdapter({ preset: 'openai', baseUrl: server.url, apiKey: 'sk-images-0123456789abcdef' })
    const huge = 'A'.repeat(20_000_004)
    server.handle(judgesImages)
    const chunks = await collect(adapter.stream({ provider: 'openai', model: 'gpt-4.1', messages: deepFreeze(screenshots(3, (i) => (i === 1 ? huge : pixel))) }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    expect(imageSlots(server.requests[0]!.body as Body)).toEqual(['img', "[image omitted: 20.0 MB, over the provider's limit of 20.0 MB per image]", 'img'])
  })
})

describe('the request prefix as images accumulate', () => {
  const provider = resolveProvider({ name: 'vllm', baseUrl: 'http://127.0.0.1:1', images: { maxImages: 8 } })
  const body = (messages: Message[]) => requestBody({ provider: 'vllm', model: 'm', messages }, 'm', undefined, provider) as unknown as Body

  it('changes only when a batch of old images is cut, and the same history always gives the same bytes', () => {
    const history = deepFreeze(screenshots(30))
    const changedAt: number[] = []
    let previous = body(history.slice(0, 1))
    for (let images = 1; images <= 30; images++) {
      const messages = history.slice(0, 1 + 2 * images)
      const current = body(messages)
      expect(JSON.stringify(body(messages))).toBe(JSON.stringify(current))
      // The previous request's messages are this request's prefix unless a cut changed them.
      if (JSON.stringify(current.messages.slice(0, previous.messages.length)) !== JSON.stringify(previous.messages)) changedAt.push(images)
      expect(imageSlots(current).filter((slot) => slot === 'img').length).toBeLessThanOrEqual(8)
      previous = current
    }
    // 8 fit; the 9th cuts to 4, and every 5th after it cuts again.
    expect(changedAt).toEqual([9, 14, 19, 24, 29])
  })

  it('counts the images of user messages and tool results alike, and enforces nothing without limits', () => {
    const mixed = [
      createUserMessage([
        { type: 'text', text: 'compare' },
        { type: 'image', mediaType: 'image/png', data: pixel },
        { type: 'image', mediaType: 'image/png', data: pixel },
      ]),
      ...screenshots(2).slice(1),
    ]
    const two = resolveProvider({ name: 'vllm', baseUrl: 'http://127.0.0.1:1', images: { maxImages: 3 } })
    const note = imageNotes.older({ maxImages: 3 })
    expect(imageSlots(requestBody({ provider: 'vllm', model: 'm', messages: mixed }, 'm', undefined, two) as unknown as Body)).toEqual([note, note, note, 'img'])
    expect(imageSlots(body(screenshots(2)))).toEqual(['img', 'img'])
    const unlimited = resolveProvider({ name: 'vllm', baseUrl: 'http://127.0.0.1:1' })
    expect(imageSlots(requestBody({ provider: 'vllm', model: 'm', messages: screenshots(600) }, 'm', undefined, unlimited) as unknown as Body)).toEqual(Array(600).fill('img'))
  })

  it('leaves the messages it was given unchanged (the session log keeps every image)', () => {
    const history = screenshots(12)
    const before = structuredClone(history)
    body(history)
    expect(history).toEqual(before)
  })
})

describe('image limits in the configuration', () => {
  it('come from the OpenAI preset; a model overrides per field; a limit that cannot work is refused', () => {
    const resolved = resolveProvider({ preset: 'openai', models: { 'gpt-4.1': { images: { maxImages: 10 } } } })
    expect([resolved.images, resolved.models['gpt-4.1']!.images, resolveProvider('deepseek').images]).toEqual([
      { maxImages: 500, maxImageBytes: 20_000_000, maxTotalBytes: 50_000_000, mediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] },
      { maxImages: 10 },
      { mediaTypes: [] },
    ])
    const problem = (images: ProviderConfig['images'], models?: ProviderConfig['models']) => {
      try {
        resolveProvider({ name: 'vllm', baseUrl: 'http://127.0.0.1:1', images, ...(models ? { models } : {}) })
        return undefined
      } catch (error) {
        return { code: (error as { code: string }).code, message: (error as Error).message }
      }
    }
    expect([
      problem({ maxImages: 0 }),
      problem({ maxTotalBytes: 10 }, { m: { images: { maxImageBytes: 11 } } }),
      problem({ mediaTypes: ['image/png', ''] }),
    ]).toEqual([
      { code: 'INVALID_PROVIDER_CONFIG', message: 'provider "vllm": images.maxImages must be a positive integer, got 0' },
      {
        code: 'INVALID_PROVIDER_CONFIG',
        message: 'provider "vllm": models.m.images.maxImageBytes (11) must not exceed models.m.images.maxTotalBytes (10): one image must fit in a request',
      },
      { code: 'INVALID_PROVIDER_CONFIG', message: 'provider "vllm": images.mediaTypes must be a list of media types such as "image/png"' },
    ])
  })
})

describe('images in a format the provider does not take', () => {
  /** Refuses like OpenAI an image whose data URL is not PNG, JPEG, GIF or WebP (OpenAI's wording); else streams "ok". */
  const judgesFormats: Handler = async (request, res, closed) => {
    const urls = (request.body as Body).messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url) : []))
    if (urls.some((url) => !/^data:image\/(png|jpeg|gif|webp);/.test(url))) {
      const message = "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp']."
      return reply(400, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_image_format' } })(request, res, closed)
    }
    return sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')])(request, res, closed)
  }

  it("with the OpenAI preset, an SVG or BMP a tool returned is replaced by a note naming its type, and the session's requests are accepted", async () => {
    const adapter = new OpenAiAdapter({ preset: 'openai', baseUrl: server.url, apiKey: 'sk-images-0123456789abcdef' })
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')
    const history = deepFreeze([
      createUserMessage([
        { type: 'text', text: 'compare' },
        { type: 'image', mediaType: 'image/svg+xml', data: svg },
        { type: 'image', mediaType: 'image/bmp', data: 'Qk0=' },
        { type: 'image', mediaType: 'image/png', data: pixel },
        { type: 'image', mediaType: 'IMAGE/JPG', data: '/9j/4AAQ' },
      ]),
    ])
    server.handle(judgesFormats)
    const chunks = await collect(adapter.stream({ provider: 'openai', model: 'gpt-4.1', messages: history }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    const parts = (server.requests[0]!.body as Body).messages[0]!.content as Part[]
    expect(parts.map((part) => part.text ?? part.image_url!.url.slice(0, 22))).toEqual([
      'compare',
      '[image omitted: image/svg+xml, a type the provider does not take (image/png, image/jpeg, image/gif, image/webp)]',
      '[image omitted: image/bmp, a type the provider does not take (image/png, image/jpeg, image/gif, image/webp)]',
      'data:image/png;base64,',
      'data:image/jpeg;base64',
    ])
  })
})

describe('a provider that takes no images (DeepSeek)', () => {
  /** Refuses like DeepSeek's chat completions any content part that is not text (its serde wording); else streams "ok". */
  const textOnly: Handler = async (request, res, closed) => {
    const at = (request.body as Body).messages.findIndex((m) => Array.isArray(m.content) && m.content.some((p) => p.type !== 'text'))
    if (at >= 0) {
      const message = `Failed to deserialize the JSON body into the target type: messages[${at}]: unknown variant \`image_url\`, expected \`text\` at line 1 column 120`
      return reply(400, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } })(request, res, closed)
    }
    return sse([chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')])(request, res, closed)
  }

  it('with the DeepSeek preset, a screenshot a tool returned (or a pasted image) is sent as a note, and the session goes on', async () => {
    const adapter = new OpenAiAdapter({ preset: 'deepseek', baseUrl: server.url, apiKey: 'sk-deepseek-0123456789abcdef' })
    const history = deepFreeze([...screenshots(1), createUserMessage([{ type: 'image', mediaType: 'image/png', data: pixel }, { type: 'text', text: 'and this?' }])])
    server.handle(textOnly)
    const chunks = await collect(adapter.stream({ provider: 'deepseek', model: 'deepseek-v4-flash', messages: history }))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: { kind: 'stop' } })
    const messages = (server.requests[0]!.body as Body).messages
    expect(messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_0', content: 'shot 0' },
      {
        role: 'user',
        content:
          'Images returned by tool call call_0:\n\n[image omitted: image/png; this provider takes no images]\n\n[image omitted: image/png; this provider takes no images]\n\nand this?',
      },
    ])
  })
})

describe('a refusal about images from a server whose limits dsh does not know', () => {
  it("says to set the provider's image limits (vLLM's --limit-mm-per-prompt, a text-only model)", async () => {
    const adapter = new OpenAiAdapter({ name: 'vllm', baseUrl: server.url, apiKey: 'sk-vllm-0123456789abcdef' })
    const refusals = ['At most 1 image(s) may be provided in one request.', 'Failed to deserialize the JSON body into the target type: messages[1]: unknown variant `image_url`, expected `text`']
    const failures: unknown[] = []
    for (const message of refusals) {
      server.handle(reply(400, { object: 'error', message, type: 'BadRequestError', param: null, code: 400 }))
      failures.push((await collect(adapter.stream({ provider: 'vllm', model: 'qwen-vl', messages: screenshots(2) }))).at(-1))
    }
    const hint = " Its image limits are lower than what the request carried: set images for this provider (maxImages, maxImageBytes, maxTotalBytes, or mediaTypes: [] if it takes no images), and the request leaves out what does not fit."
    expect(failures).toEqual(
      refusals.map((said) => ({
        type: 'finish',
        reason: { kind: 'error', failure: { code: 'BAD_REQUEST', status: 400, message: `vllm rejected the request for qwen-vl (HTTP 400: ${said}; code 400; BadRequestError).${hint}` } },
      })),
    )
  })
})
