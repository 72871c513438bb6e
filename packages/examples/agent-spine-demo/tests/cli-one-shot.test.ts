import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { onlySession, runDemo, tempDir, trace, workspace } from './helpers'

// Each test starts a real `dsh-demo` process (tsx from sources); they run side by side.
describe.concurrent('dsh-demo -p (one prompt, then exit)', { timeout: 240_000 }, () => {
  it('prints the answer after a real tool round trip and exits 0; the session is saved', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout, stderr } = await runDemo(['-p', 'what is in this project?', '--data-dir', data], { cwd })
    expect(status).toBe(0)
    expect(stdout).toBe('The workspace has 3 entries (1 directory, 2 files): README.md, package.json, src/. README.md has 3 lines and starts with "# Tiny project".\n')
    const { id, events } = onlySession(data)
    expect(stderr.split('\n')).toEqual([
      '▸ list_dir {"path":"."}',
      '  ◂ 3 lines',
      '▸ read_file {"path":"README.md"}',
      '  ◂ 3 lines',
      expect.stringMatching(/^· turn 1 done · [\d,]+ tokens in \(cache hits not reported\) · \d+ out$/),
      `session ${id} (continue it with --resume ${id})`,
      '',
    ])
    expect(trace(events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "what is in this project?"',
      'assistant/chunk ×4',
      'assistant/message tool-calls calls list_dir',
      'tool/call list_dir',
      // dsh-permissions logs its decision of every call between the call and its result.
      'permission/decision',
      'tool/result ok',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/chunk ×5',
      'assistant/message tool-calls calls read_file',
      'tool/call read_file',
      'permission/decision',
      'tool/result ok',
      'step/end 1.2',
      'step/start 1.3',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message stop',
      'step/end 1.3',
      'turn/end 1 completed',
    ])
    expect(events[0]).toMatchObject({ type: 'session/meta', data: { cwd } })
  })

  it('--json writes the session events as JSON lines with a dense seq, and nothing else', async () => {
    const cwd = workspace()
    const data = tempDir()
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--json', '--data-dir', data], { cwd })
    expect(status).toBe(0)
    expect(stderr).toBe('')
    const events = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as AnySessionEvent)
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))
    expect(events.map((event) => event.type).filter((type) => type !== 'assistant/chunk')).toEqual([
      'session/meta',
      'inbox/enqueue',
      'inbox/dequeue',
      'turn/start',
      'step/start',
      'user/message',
      'request/header',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    // Exactly the saved log.
    expect(events).toEqual(onlySession(data).events)
  })

  it('exits 1 when the turn fails, and says why', async () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script: [{ error: { code: 'AUTH', message: 'the key was refused' } }] } }))
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--data-dir', tempDir()], { cwd })
    expect(status).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^· turn 1 failed: AUTH: the key was refused · [\d,]+ tokens in \(cache hits not reported\) · 0 out$/m)
  })

  it('exits 2 on a config error, naming the file and the field', async () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'dsh.config.yaml'), 'retry:\n  baseDelayMs: -1\n')
    const data = tempDir()
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--data-dir', data], { cwd })
    expect({ status, stdout, stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: `dsh-demo: ${join(cwd, 'dsh.config.yaml')}: field "retry.baseDelayMs": expected number >= 0 but got -1\n`,
    })
    expect(readdirSync(data)).toEqual([])
  })

  it('denies write_file without --yes (the turn goes on), and writes with --yes', async () => {
    const cwd = workspace()
    const script = [{ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hello' } }], answer: 'Tried.' }]
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
    const denied = await runDemo(['-p', 'take a note', '--data-dir', tempDir()], { cwd })
    expect(denied.status).toBe(0)
    expect(denied.stdout).toBe('Tried.\n')
    expect(denied.stderr.split('\n').slice(0, 3)).toEqual([
      '▸ write_file {"path":"notes.txt","content":"hello"}',
      '! denied write_file: write 5 bytes to notes.txt (-p asks no questions: allow it with --yes, a --mode that allows it, or a rule in ~/.dsh/settings.json)',
      '  ◂ DENIED: tool call denied: not approved',
    ])
    expect(existsSync(join(cwd, 'notes.txt'))).toBe(false)

    const allowed = await runDemo(['-p', 'take a note', '--yes', '--data-dir', tempDir()], { cwd })
    expect(allowed.status).toBe(0)
    expect(allowed.stderr.split('\n').slice(0, 2)).toEqual(['▸ write_file {"path":"notes.txt","content":"hello"}', '  ◂ Wrote 5 bytes to notes.txt'])
    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).toBe('hello')
  })

  it('talks to an OpenAI-compatible server (--base-url), with the key from the environment and never in the output', async () => {
    const cwd = workspace()
    const data = tempDir()
    const requests: { authorization?: string; body: { model: string; messages: { role: string; content: unknown }[] } }[] = []
    const replies = [
      [
        { choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }] } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 300, completion_tokens: 10, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 300 } },
      ],
      [
        { choices: [{ index: 0, delta: { content: 'Three ' } }] },
        { choices: [{ index: 0, delta: { content: 'entries.' } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 340, completion_tokens: 3, prompt_cache_hit_tokens: 300, prompt_cache_miss_tokens: 40 } },
      ],
    ]
    const server = createServer(async (request: IncomingMessage, response) => {
      let body = ''
      for await (const chunk of request) body += chunk
      requests.push({ authorization: request.headers.authorization, body: JSON.parse(body) })
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const chunk of replies[requests.length - 1] ?? []) response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      response.end('data: [DONE]\n\n')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    try {
      const secret = 'sk-test-0123456789abcdef'
      const { status, stdout, stderr } = await runDemo(
        ['-p', 'what is here?', '--provider', 'local', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'tiny-model', '--api-key-env', 'LOCAL_KEY', '--data-dir', data],
        { cwd, env: { LOCAL_KEY: secret } },
      )
      expect(status).toBe(0)
      expect(stdout).toBe('Three entries.\n')
      // 300 + 340 prompt tokens, 300 of them cache hits; 10 + 3 out.
      expect(stderr).toMatch(/^· turn 1 done · 640 tokens in \(cache hits 47%\) · 13 out$/m)
      expect(requests.map((request) => [request.authorization, request.body.model])).toEqual([
        [`Bearer ${secret}`, 'tiny-model'],
        [`Bearer ${secret}`, 'tiny-model'],
      ])
      expect(requests[1]!.body.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool'])
      expect(requests[1]!.body.messages[3]!.content).toBe('README.md\npackage.json\nsrc/')
      const saved = readFileSync(join(data, `${onlySession(data).id}.jsonl`), 'utf8')
      expect([stdout, stderr, saved].some((text) => text.includes(secret))).toBe(false)
    } finally {
      server.close()
    }
  })
})
