import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runDemo, startDemo, tempDir, workspace } from './helpers'

/**
 * A local OpenAI-compatible server answering call n with `replies[n]`: the SSE
 * chunks to send, and whether to end the stream properly (`[DONE]`) or cut it.
 */
async function chatServer(replies: { chunks: object[]; cut?: boolean }[]): Promise<{ url: string; calls: () => number; close(): void }> {
  let calls = 0
  const server = createServer(async (request: IncomingMessage, response) => {
    for await (const _ of request) void _
    const reply = replies[Math.min(calls++, replies.length - 1)]!
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    for (const chunk of reply.chunks) response.write(`data: ${JSON.stringify(chunk)}\n\n`)
    response.end(reply.cut ? undefined : 'data: [DONE]\n\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, calls: () => calls, close: () => server.close() }
}

const text = (content: string) => ({ choices: [{ index: 0, delta: { content } }] })

describe.concurrent('dsh-demo output', { timeout: 240_000 }, () => {
  // Issue 17.2: `-p … > answer.txt` held four concatenated partial answers after three retries.
  it('-p writes only the answer of the step that succeeded; retried attempts are reported on stderr', async () => {
    const cwd = workspace()
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ retry: { baseDelayMs: 0, maxDelayMs: 0 } }))
    // Three streams that end mid-answer without a finish_reason, then a whole answer.
    const cut = { chunks: [text('The answer '), text('is')], cut: true }
    const server = await chatServer([cut, cut, cut, { chunks: [text('The answer '), text('is 42.'), { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }] }])
    try {
      const { status, stdout, stderr } = await runDemo(['-p', 'what is the answer?', '--provider', 'local', '--base-url', server.url, '--model', 'm', '--data-dir', tempDir()], { cwd })
      expect({ status, stdout }).toEqual({ status: 0, stdout: 'The answer is 42.\n' })
      expect(server.calls()).toBe(4)
      const retried = (step: number, attempt: number) =>
        `· step 1.${step} failed: TRANSPORT: local's stream ended before the answer finished (no finish_reason) · retry ${attempt} in 0 ms; its partial answer (13 characters) was discarded`
      expect(stderr.split('\n')).toEqual([retried(1, 1), retried(2, 2), retried(3, 3), expect.stringMatching(/^· turn 1 done · /), expect.stringMatching(/^session \S+ \(continue it with --resume \S+\)$/), ''])
    } finally {
      server.close()
    }
  })

  it('-p: the text of a step that called tools is a note on stderr, not part of the answer', async () => {
    const cwd = workspace()
    const script = [{ text: 'Let me look.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }], answer: 'Three entries.' }]
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
    const { status, stdout, stderr } = await runDemo(['-p', 'look', '--data-dir', tempDir()], { cwd })
    expect({ status, stdout }).toEqual({ status: 0, stdout: 'Three entries.\n' })
    expect(stderr.split('\n').slice(0, 3)).toEqual(['Let me look.', '▸ list_dir {"path":"."}', '  ◂ 4 lines'])
  })

  // Issue 17.8: `◂ 19 lines` / `◂ 33 lines` did not say which call they answered.
  it('names the call on each result of parallel tool calls', async () => {
    const cwd = workspace()
    const calls = [
      { name: 'read_file', arguments: { path: 'README.md' } },
      { name: 'read_file', arguments: { path: 'package.json' } },
      { name: 'list_dir', arguments: { path: 'src' } },
    ]
    writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script: [{ toolCalls: calls, answer: 'Done.' }] } }))
    const { status, stderr } = await runDemo(['-p', 'read them', '--data-dir', tempDir()], { cwd })
    expect(status).toBe(0)
    expect(stderr.split('\n').slice(0, 6)).toEqual([
      '▸ read_file {"path":"README.md"}',
      '▸ read_file {"path":"package.json"}',
      '▸ list_dir {"path":"src"}',
      '  ◂ read_file {"path":"README.md"}: 3 lines',
      '  ◂ read_file {"path":"package.json"}: 1 { "name": "tiny" }',
      '  ◂ list_dir: add.ts',
    ])
  })

  // Issue 17.8: /resume showed nothing of the session it resumed; /sessions showed no titles.
  it('/sessions shows each session’s first prompt; /resume shows its last turns', async () => {
    const cwd = workspace()
    const data = tempDir()
    const demo = startDemo(['--data-dir', data], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('hello\n')
    await demo.waitFor(/· turn 1 done/)
    demo.write('what is in this project?\n')
    await demo.waitFor(/· turn 2 done/)
    const first = /^session (\S+) ·/m.exec(demo.stdout())![1]!
    demo.write('/new\n')
    await demo.waitFor(/^session \S+ ·/m, 2)
    demo.write('/sessions\n')
    await demo.waitFor(new RegExp(`^  ${first}  updated .*$`, 'm'))
    expect(demo.stdout()).toMatch(new RegExp(`^  ${first}  updated [\\d-]+ [\\d:]+  ${cwd}  "hello"$`, 'm'))
    demo.write(`/resume ${first}\n`)
    await demo.waitFor(new RegExp(`^session ${first} \\(resumed`, 'm'))
    demo.end()
    expect(await demo.exited).toBe(0)
    const resumed = demo.stdout().split('\n')
    const at = resumed.findIndex((line) => line.startsWith(`session ${first} (resumed`))
    expect(resumed.slice(at, at + 7)).toEqual([
      `session ${first} (resumed, 2 turns so far) · workspace ${cwd} · saved in ${data} · mode default`,
      '(2 turns)',
      '> hello',
      '  I am the offline demo model (no network, no API key). You said: "hello". Ask me about the files in this workspace and I will look with the tools.',
      '> what is in this project?',
      '  ▸ list_dir, read_file',
      '  The workspace has 3 entries (1 directory, 2 files): README.md, package.json, src/. README.md has 3 lines and starts with "# Tiny project".',
    ])
  })

  // Issue 15.3: a --base-url with user:password@ was shown in the greeting.
  it('refuses a base URL with a password before anything starts, and never prints the password', async () => {
    const cwd = workspace()
    const { status, stdout, stderr } = await runDemo(['--provider', 'local', '--base-url', 'http://alice:s3cret-pass@127.0.0.1:9/v1', '--model', 'm', '--data-dir', tempDir()], { cwd })
    expect({ status, stdout }).toEqual({ status: 2, stdout: '' })
    expect(stderr).toMatch(/^dsh-demo: .*http:\/\/\[redacted\]@127\.0\.0\.1:9\/v1.*user name or password/)
    expect(stderr).not.toMatch(/s3cret|alice/)
  })

  // Issue 15.7: Node printed its overflow warning and ran with a 1 ms delay.
  it('refuses a chunk delay a timer cannot wait, with no warning from Node', async () => {
    const { status, stdout, stderr } = await runDemo(['-p', 'hello', '--chunk-delay-ms', '99999999999', '--data-dir', tempDir()], { cwd: workspace() })
    expect({ status, stdout, stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: 'dsh-demo: --chunk-delay-ms: 99999999999 is out of range (0 to 2147483647 ms, the longest delay a timer can wait)\n',
    })
  })
})
