import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { Redactor, toToolOutput } from '@deepseek-ai/dsh-mcp'
import { connected, everything, execute, filesystem, mcpSpine, resultText, tempDir } from './helpers'

const LIMITS = { maxOutputChars: 60_000, maxImageBytes: 5 * 1024 * 1024 }
const none = new Redactor([])

describe('results map to content blocks, isError to an error result (R-MCP-2)', () => {
  it('text, structured content, images, embedded resources and resource links from a real server', async () => {
    const kit = await mcpSpine({ servers: { everything: everything() } })
    await connected(kit, 'everything')
    const agent = await kit.agent()

    const structured = await execute(kit, agent, 'mcp__everything__get-structured-content', { location: 'Chicago' })
    expect(structured.error).toBeUndefined()
    // The server sends the JSON as text beside structuredContent; the text is what the model reads.
    expect(JSON.parse(resultText(structured))).toEqual({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) })

    const image = await execute(kit, agent, 'mcp__everything__get-tiny-image', {})
    const blocks = (image.message.content[0] as unknown as { content: ContentBlock[] }).content
    expect(blocks.map((block) => block.type)).toEqual(['text', 'image', 'text'])
    expect(blocks[1]).toMatchObject({ type: 'image', mediaType: 'image/png' })
    expect(Buffer.from((blocks[1] as { data: string }).data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG')

    const text = await execute(kit, agent, 'mcp__everything__get-resource-reference', { resourceType: 'Text', resourceId: 1 })
    expect(resultText(text)).toMatch(
      /^Returning resource reference for Resource 1:\n\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource created at .+\nYou can access this resource using the URI: demo:\/\/resource\/dynamic\/text\/1$/,
    )
    // A blob of a text type is decoded for the model.
    const blob = await execute(kit, agent, 'mcp__everything__get-resource-reference', { resourceType: 'Blob', resourceId: 2 })
    expect(resultText(blob).split('\n').slice(0, 2)).toEqual(['Returning resource reference for Resource 2:', '[resource demo://resource/dynamic/blob/2 (text/plain)]'])

    const links = await execute(kit, agent, 'mcp__everything__get-resource-links', { count: 2 })
    expect(resultText(links)).toBe(
      [
        'Here are 2 resource links to resources available in this server:',
        '[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain) Resource 1: plaintext resource]',
        '[resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain) Resource 2: plaintext resource]',
      ].join('\n'),
    )
  })

  it('images reach the model only in the types every provider reads (Anthropic refuses the request, and so every later one, otherwise)', async () => {
    const kit = await mcpSpine({ servers: { images: { command: process.execPath, args: [fileURLToPath(new URL('./fixtures/images-server.mjs', import.meta.url))] } } })
    await connected(kit, 'images')
    const agent = await kit.agent()
    const result = await execute(kit, agent, 'mcp__images__draw', {})
    const bytes = Buffer.alloc(3000).toString('base64')
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>'
    expect((result.message.content[0] as unknown as { content: ContentBlock[] }).content).toEqual([
      { type: 'image', mediaType: 'image/png', data: bytes },
      // `image/jpg` is not a registered type: providers refuse it as written.
      { type: 'image', mediaType: 'image/jpeg', data: bytes },
      // SVG is text: the model reads its source.
      { type: 'text', text: `[image: image/svg+xml, shown as its source]\n${svg}` },
      { type: 'text', text: '[image: image/bmp image of 2.9 KB not shown: the model reads PNG, JPEG, GIF and WebP images]' },
      { type: 'text', text: `[resource chart://1: image/svg+xml, shown as its source]\n${svg}` },
      // A JPEG labelled PNG goes as what its bytes are (Anthropic refuses a label that does not match them).
      { type: 'image', mediaType: 'image/jpeg', data: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60)]).toString('base64') },
    ])
  })

  it('an isError result is an error result the model reads, and the server keeps working', async () => {
    const root = tempDir()
    const kit = await mcpSpine({ servers: { files: filesystem(root) } })
    await connected(kit, 'files')
    const agent = await kit.agent()
    const outside = await execute(kit, agent, 'mcp__files__read_text_file', { path: '/etc/hostname' })
    expect(outside.error).toEqual({ code: 'TOOL_ERROR', message: `Access denied - path outside allowed directories: /etc/hostname not in ${root}` })
    expect(outside.message.content[0]).toMatchObject({ type: 'tool-result', isError: true, content: [{ type: 'text', text: `Error: ${outside.error!.message}` }] })

    writeFileSync(join(root, 'a.txt'), 'still here')
    expect(resultText(await execute(kit, agent, 'mcp__files__read_text_file', { path: join(root, 'a.txt') }))).toBe('still here')
  })

  it('caps text like the workspace tools: the head and the tail of a long result, saying how much was cut', async () => {
    const kit = await mcpSpine({ servers: { everything: everything() }, maxOutputChars: 200 })
    await connected(kit, 'everything')
    const agent = await kit.agent()
    const message = `${'a'.repeat(300)}${'z'.repeat(300)}`
    const result = await execute(kit, agent, 'mcp__everything__echo', { message })
    // "Echo: " + 600 characters: 200 in all, the 57-character note included (72 from the head, 71 from the tail).
    expect(resultText(result)).toBe(`Echo: ${'a'.repeat(66)}\n[… 463 characters cut from the middle of this result …]\n${'z'.repeat(71)}`)
  })
})

describe('toToolOutput', () => {
  it('shares the text budget between blocks: short blocks stay whole, long ones are cut to what is left, notes included', () => {
    const image = { type: 'image' as const, mimeType: 'image/png', data: 'AAAA' }
    const out = toToolOutput(
      { content: [{ type: 'text', text: 'short' }, image, { type: 'text', text: 'x'.repeat(300) }, image, { type: 'text', text: 'y'.repeat(300) }] },
      { ...LIMITS, maxOutputChars: 250 },
      none,
    )
    // 5 + 122 + 123 characters: each cut block's 57-character note counts in its share.
    expect(out).toEqual([
      { type: 'text', text: 'short' },
      { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      { type: 'text', text: `${'x'.repeat(33)}\n[… 235 characters cut from the middle of this result …]\n${'x'.repeat(32)}` },
      { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      { type: 'text', text: `${'y'.repeat(33)}\n[… 234 characters cut from the middle of this result …]\n${'y'.repeat(33)}` },
    ])
  })

  it('joins adjacent text blocks before it cuts them (one note, not one per block)', () => {
    const out = toToolOutput(
      { content: [{ type: 'text', text: 'short' }, { type: 'text', text: 'x'.repeat(100) }, { type: 'text', text: 'y'.repeat(100) }] },
      { ...LIMITS, maxOutputChars: 100 },
      none,
    )
    // 207 characters joined; 100 in all: 22 from the head, the 57-character note, 21 from the tail.
    expect(out).toEqual([{ type: 'text', text: `short\n${'x'.repeat(16)}\n[… 164 characters cut from the middle of this result …]\n${'y'.repeat(21)}` }])
  })

  it('replaces an image over the limit, audio and binary resources with a line that names them', () => {
    const data = Buffer.alloc(3000).toString('base64')
    expect(
      toToolOutput(
        {
          content: [
            { type: 'image', mimeType: 'image/png', data },
            { type: 'audio', mimeType: 'audio/wav', data },
            { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream', blob: data } },
          ],
        },
        { ...LIMITS, maxImageBytes: 1024 },
        none,
      ),
    ).toEqual([
      { type: 'text', text: '[image: image/png image of 2.9 KB not shown: larger than the 1.0 KB limit]' },
      { type: 'text', text: '[audio/wav audio of 2.9 KB not shown: the model reads text and images only]' },
      { type: 'text', text: '[resource file:///x.bin (application/octet-stream): 2.9 KB of binary data not shown]' },
    ])
  })

  it('uses structured content when there is no content, says so when there is nothing, and redacts secrets', () => {
    expect(toToolOutput({ content: [], structuredContent: { ok: true } }, LIMITS, none)).toEqual([{ type: 'text', text: '{"ok":true}' }])
    expect(toToolOutput({ content: [] }, LIMITS, none)).toEqual([{ type: 'text', text: '[the tool returned no content]' }])
    expect(toToolOutput({ content: [{ type: 'text', text: 'token=abc123456' }] }, LIMITS, new Redactor(['abc123456']))).toEqual([{ type: 'text', text: 'token=[redacted]' }])
  })

  it('throws the text of an isError result as TOOL_ERROR', () => {
    expect(() => toToolOutput({ content: [{ type: 'text', text: 'no such row' }], isError: true }, LIMITS, none)).toThrow(
      expect.objectContaining({ code: 'TOOL_ERROR', message: 'no such row' }),
    )
    expect(() => toToolOutput({ content: [], isError: true }, LIMITS, none)).toThrow(
      expect.objectContaining({ code: 'TOOL_ERROR', message: 'the MCP tool reported an error without a message' }),
    )
  })
})
