import { describe, expect, it } from 'vitest'
import {
  assemble,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  type LlmRequest,
  type Message,
  type ToolSchema,
  type ToolCallBlock,
} from '@deepseek-ai/dsh-llm'
import { demoResponder, ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { collect } from './helpers'

const schema = (name: string): ToolSchema => ({ name, description: name, parameters: { type: 'object' } })
const workspaceTools = ['list_dir', 'read_file', 'search_files', 'write_file'].map(schema)
const source = { kind: 'model', provider: 'scripted', model: 'demo' } as const

/**
 * Plays the demo model against fake workspace tools the way the agent loop
 * would: each assistant message with tool calls is followed by their
 * results, until the model answers with text.
 */
async function conversation(prompt: string, tools: Record<string, (args: Record<string, string>) => string | Error>, reasoningEffort?: string) {
  const model = new ScriptedModel({ respond: demoResponder, usage: false })
  const messages: Message[] = [createUserMessage(prompt)]
  const calls: string[] = []
  for (let step = 0; step < 6; step++) {
    const request: LlmRequest = { provider: 'scripted', model: 'demo', tools: Object.keys(tools).map(schema), messages: [...messages], reasoningEffort }
    const reply = assemble(await collect(model.stream(request)))
    messages.push(createAssistantMessage(reply.content, { source }))
    const toolCalls = reply.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
    if (toolCalls.length === 0) return { calls, answer: reply.content, finish: reply.finishReason }
    for (const call of toolCalls) {
      calls.push(`${call.name} ${call.arguments}`)
      const output = tools[call.name]!(JSON.parse(call.arguments) as Record<string, string>)
      messages.push(createToolResultMessage({ callId: call.id, content: output instanceof Error ? output.message : output, isError: output instanceof Error }))
    }
  }
  throw new Error('the demo model did not answer within 6 steps')
}

const files: Record<string, string> = {
  'README.md': '# dsh\n\nAn agent harness.',
  'package.json': '{\n  "name": "demo"\n}',
}
const workspace = {
  list_dir: () => 'README.md\nsrc/\npackage.json',
  read_file: ({ path }: Record<string, string>) => files[path!] ?? new Error(`no such file: ${path}`),
  search_files: ({ pattern }: Record<string, string>) => (pattern === 'TODO' ? 'src/a.ts:3: // TODO tidy up\nsrc/b.ts:9: // TODO test' : ''),
  write_file: () => new Error('the demo never writes'),
}

describe('demo responder', () => {
  it('lists the workspace, reads the README, then answers with what the tools said', async () => {
    expect(await conversation('What is in this project?', workspace)).toEqual({
      calls: ['list_dir {"path":"."}', 'read_file {"path":"README.md"}'],
      answer: [{ type: 'text', text: 'The workspace has 3 entries (1 directory, 2 files): README.md, src/, package.json. README.md has 3 lines and starts with "# dsh".' }],
      finish: { kind: 'stop' },
    })
  })

  it('names the first eight entries of a long listing and counts the rest', async () => {
    const names = Array.from({ length: 11 }, (_, i) => `f${i}.txt`)
    const result = await conversation('what files are here?', { ...workspace, list_dir: () => names.join('\n'), read_file: () => 'x' })
    expect((result.answer[0] as { text: string }).text).toMatch(
      /^The workspace has 11 entries \(0 directories, 11 files\): f0\.txt, f1\.txt, f2\.txt, f3\.txt, f4\.txt, f5\.txt, f6\.txt, f7\.txt and 3 more\. /,
    )
  })

  it('reads the file the prompt names', async () => {
    const result = await conversation('Please read package.json', workspace)
    expect(result.calls).toEqual(['list_dir {"path":"."}', 'read_file {"path":"package.json"}'])
  })

  it('searches when asked to find something', async () => {
    expect(await conversation('find TODO in the code', workspace)).toEqual({
      calls: ['search_files {"pattern":"TODO"}'],
      answer: [{ type: 'text', text: '"TODO" matches 2 lines; the first is src/a.ts:3: // TODO tidy up.' }],
      finish: { kind: 'stop' },
    })
  })

  it("speaks dsh-workspace-tools: grep instead of search_files, read_file's numbered lines and notes", async () => {
    const numbered = (text: string) => text.split('\n').map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join('\n')
    const workspaceTools = {
      list_dir: workspace.list_dir,
      read_file: ({ path }: Record<string, string>) => `${numbered(files[path!]!)}\n[end of file]`,
      grep: ({ pattern }: Record<string, string>) => (pattern === 'TODO' ? 'src/a.ts:3: // TODO tidy up\n[stopped after 1 result; narrow the pattern, the path or the glob]' : `No matches for "${pattern}".`),
    }
    expect(await conversation('What is in this project?', workspaceTools)).toEqual({
      calls: ['list_dir {"path":"."}', 'read_file {"path":"README.md"}'],
      answer: [{ type: 'text', text: 'The workspace has 3 entries (1 directory, 2 files): README.md, src/, package.json. README.md has 3 lines and starts with "# dsh".' }],
      finish: { kind: 'stop' },
    })
    expect((await conversation('find TODO in the code', workspaceTools)).answer).toEqual([
      { type: 'text', text: '"TODO" matches 1 line; the first is src/a.ts:3: // TODO tidy up.' },
    ])
    expect((await conversation('find FIXME in the code', workspaceTools)).answer).toEqual([{ type: 'text', text: 'Nothing matches "FIXME".' }])
  })

  it('answers a prompt that needs no tool with text only', async () => {
    expect(await conversation('Good morning!', workspace)).toEqual({
      calls: [],
      answer: [{ type: 'text', text: 'I am the offline demo model (no network, no API key). You said: "Good morning!". Ask me about the files in this workspace and I will look with the tools.' }],
      finish: { kind: 'stop' },
    })
  })

  it('does not call tools the request does not offer', async () => {
    const result = await conversation('List the files', {})
    expect(result.calls).toEqual([])
  })

  it('reports a failing tool in its answer', async () => {
    const result = await conversation('Show me the files', { ...workspace, list_dir: () => new Error('permission denied') })
    expect(result).toEqual({
      calls: ['list_dir {"path":"."}'],
      answer: [{ type: 'text', text: 'The list_dir call failed: permission denied' }],
      finish: { kind: 'stop' },
    })
  })

  it('reads a JSON listing too', async () => {
    const result = await conversation('what files are here?', { ...workspace, list_dir: () => JSON.stringify([{ name: 'docs', type: 'dir' }, { name: 'package.json', type: 'file' }]) })
    expect(result.calls).toEqual(['list_dir {"path":"."}', 'read_file {"path":"package.json"}'])
  })

  it('streams a one-line reasoning block when a reasoning effort is set', async () => {
    const result = await conversation('What is in this project?', workspace, 'high')
    expect(result.answer[0]).toEqual({ type: 'reasoning', text: 'I have what I need.' })
  })

  it('is deterministic', () => {
    const request: LlmRequest = { provider: 'scripted', model: 'demo', tools: workspaceTools, messages: [createUserMessage('list the files')] }
    expect(demoResponder(request)).toEqual(demoResponder(request))
    expect(demoResponder(request)).toEqual({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] })
  })

  it('greets an empty conversation', () => {
    expect(demoResponder({ provider: 'scripted', model: 'demo', messages: [] })).toEqual({
      text: 'Hello! I am the offline demo model. Ask me about the files in this workspace.',
    })
  })
})
