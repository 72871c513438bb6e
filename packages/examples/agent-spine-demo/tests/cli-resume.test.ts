import { readFileSync, readdirSync, watch } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { readEvents, runDemo, startDemo, tempDir, trace, workspace } from './helpers'

/** Resolves once some `*.jsonl` file in `dir` holds a line matching `pattern`; with its session id. */
function fileShows(dir: string, pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      for (const name of readdirSync(dir)) {
        if (name.endsWith('.jsonl') && pattern.test(readFileSync(join(dir, name), 'utf8'))) {
          watcher.close()
          return resolve(name.slice(0, -'.jsonl'.length))
        }
      }
    }
    const watcher = watch(dir, check)
    check()
  })
}

describe('dsh-demo --resume after a crash', { timeout: 240_000 }, () => {
  it('continues a session whose process was killed with SIGKILL mid-turn: crash repair closed the turn', async () => {
    const cwd = workspace()
    const data = tempDir()
    // A slow answer, so the kill lands while the model is still streaming.
    const doomed = startDemo(['-p', 'hello', '--data-dir', data, '--chunk-delay-ms', '200'], { cwd })
    // Written to disk (write-behind, no flush yet): the turn is open in the file.
    const id = await fileShows(data, /"type":"assistant\/chunk"/)
    doomed.child.kill('SIGKILL')
    expect(await doomed.exited).toBe('SIGKILL')
    const beforeResume = readEvents(join(data, `${id}.jsonl`))
    expect(trace(beforeResume).slice(0, 3)).toEqual(['turn/start 1 prompt', 'step/start 1.1', 'user/message "hello"'])
    expect(beforeResume.some((event) => event.type === 'turn/end')).toBe(false)

    const { status, stdout, stderr } = await runDemo(['--resume', id, '-p', 'hello again', '--data-dir', data], { cwd })
    expect({ status, stderr: stderr.split('\n').at(-2) }).toEqual({ status: 0, stderr: `session ${id} (continue it with --resume ${id})` })
    expect(stdout).toBe(
      'I am the offline demo model (no network, no API key). You said: "hello again". Ask me about the files in this workspace and I will look with the tools.\n',
    )
    const events = readEvents(join(data, `${id}.jsonl`))
    expect(trace(events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "hello"',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      // Appended by crash repair on load: the step and the turn are closed.
      'step/end 1.1',
      'turn/end 1 interrupted',
      'turn/start 2 prompt',
      'step/start 2.1',
      'user/message "hello again"',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message stop',
      'step/end 2.1',
      'turn/end 2 completed',
    ])
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index))

    // The saved log replays through every session invariant (R-SES-4), and its history is a valid request.
    const root = new Context()
    await root.plugin(Sessions)
    await root.plugin(JsonlSessionPersistence, { directory: data })
    const loaded = await root.sessionPersistence.load(SessionId(id))
    const session = root.sessions.prepare(SessionId(id), { events: loaded.events })
    expect(session.deriveMessages().map((message) => [message.role, message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('')])).toEqual([
      ['user', 'hello'],
      ['user', 'hello again'],
      ['assistant', expect.stringContaining('You said: "hello again"')],
    ])
  })
})
