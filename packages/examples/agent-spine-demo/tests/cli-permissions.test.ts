import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { onlySession, runDemo, startDemo, tempDir, trace, workspace, writeTree } from './helpers'

/** A workspace whose scripted model plays `script`, and a home directory of its own (never the real ~/.dsh). */
function setup(script: unknown[]) {
  const cwd = workspace()
  writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script } }))
  return { cwd, data: tempDir(), env: { HOME: tempDir('dsh-home-') } }
}

const write = (path: string, content: string) => ({ name: 'write_file', arguments: { path, content } })

function decisions(events: AnySessionEvent[]) {
  return events.filter((event) => event.type === 'permission/decision').map((event) => {
    const { callId: _callId, ...rest } = event.data as { callId: string }
    return rest
  })
}

function results(events: AnySessionEvent[]): string[] {
  return events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as unknown as { error?: { code: string; message: string }; message: { content: { content: { text: string }[] }[] } }
      return data.error ? `${data.error.code}: ${data.error.message}` : data.message.content[0]!.content.map((b) => b.text).join('')
    })
}

// Each test drives real `dsh-demo` processes; one after another, so a loaded machine does not starve them.
describe('dsh-demo permissions', { timeout: 240_000 }, () => {
  it('the approval prompt offers [y]es / [n]o / [a]lways; always covers the scope shown for the rest of the session', async () => {
    const { cwd, data, env } = setup([
      { toolCalls: [write('src/one.ts', 'one')], answer: 'First.' },
      { toolCalls: [write('src/two.ts', 'two')], answer: 'Second.' },
      { toolCalls: [write('top.txt', 'three')], answer: 'Third.' },
    ])
    const demo = startDemo(['--data-dir', data], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('write one\n')
    await demo.waitFor(/\? allow write_file: write 3 bytes to src\/one\.ts\? \[y\]es \/ \[n\]o \/ \[a\]lways \(write_file under src\/\*\*\) $/)
    demo.write('a\n')
    await demo.waitFor(/· turn 1 done/)
    demo.write('write two\n')
    await demo.waitFor(/· turn 2 done/)
    demo.write('write three\n')
    await demo.waitFor(/\? allow write_file: write 5 bytes to top\.txt\? \[y\]es \/ \[n\]o \/ \[a\]lways \(write_file on top\.txt\) $/)
    demo.write('n\n')
    await demo.waitFor(/· turn 3 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).toContain('  (allowed for the rest of this session: write_file under src/**)\n')
    expect([readFileSync(join(cwd, 'src/one.ts'), 'utf8'), readFileSync(join(cwd, 'src/two.ts'), 'utf8'), existsSync(join(cwd, 'top.txt'))]).toEqual(['one', 'two', false])
    const { events } = onlySession(data)
    expect(decisions(events)).toEqual([
      { tool: 'write_file', decision: 'ask', rule: 'mode default: write asks', mode: 'default', answer: 'allow', remember: { tool: 'write_file', path: 'src/**' } },
      { tool: 'write_file', decision: 'allow', rule: 'remembered rule write_file(path: "src/**") → allow', mode: 'default' },
      { tool: 'write_file', decision: 'ask', rule: 'mode default: write asks', mode: 'default', answer: 'deny' },
    ])
    // Remembered in the session only: nothing was written to the user's directory or the workspace.
    expect(existsSync(join(env.HOME, '.dsh'))).toBe(false)
    expect(existsSync(join(cwd, '.dsh'))).toBe(false)
  })

  it('words instead of y/n/a deny the call, and the model reads them', async () => {
    const { cwd, data, env } = setup([{ toolCalls: [{ name: 'shell', arguments: { command: 'npm install left-pad' } }], answer: 'Understood.' }])
    const demo = startDemo(['--data-dir', data], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('add left-pad\n')
    await demo.waitFor(/\[a\]lways \(shell commands starting with "npm install"\) $/)
    demo.write('use pnpm, not npm\n')
    await demo.waitFor(/· turn 1 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).toContain('  (denied; your words go to the agent)\n  ◂ DENIED: tool call denied: not approved; the person said: use pnpm, not npm\n')
    expect(results(onlySession(data).events)).toEqual(['DENIED: tool call denied: not approved; the person said: use pnpm, not npm'])
  })

  it('/mode shows and changes the mode; plan mode refuses writes without asking and the status line says so; bypass needs the flag', async () => {
    const { cwd, data, env } = setup([{ toolCalls: [write('notes.txt', 'x')], answer: 'Could not.' }])
    const demo = startDemo(['--data-dir', data], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('/mode\n')
    await demo.waitFor(/^mode default \(\/mode default · \/mode accept-edits · \/mode plan\)$/m)
    demo.write('/mode bypass\n')
    await demo.waitFor(/bypass is only available when dsh-demo was started with --mode bypass/)
    demo.write('/mode plan\n')
    await demo.waitFor(/^mode plan \(the agent is told with your next message\)$/m)
    demo.write('take a note\n')
    await demo.waitFor(/· turn 2 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect(demo.stdout()).not.toContain('[y]es')
    expect(demo.stdout()).toMatch(/^· turn 2 done · [\d,]+ tokens in \(cache hits not reported\) · \d+ out · plan mode$/m)
    expect(existsSync(join(cwd, 'notes.txt'))).toBe(false)
    const { events } = onlySession(data)
    expect(trace(events).filter((line) => /^(turn|user|permission|tool\/result)/.test(line))).toEqual([
      'permission/mode',
      // The mode change is one injected message (a one-shot injection turn), before the next prompt.
      'turn/start 1 injection',
      expect.stringMatching(/^user\/message "\[Permission mode: plan\] The person changed the permission mode\. Explore and read/),
      'turn/end 1 completed',
      'turn/start 2 prompt',
      'user/message "take a note"',
      'permission/decision',
      'tool/result DENIED',
      'turn/end 2 completed',
    ])
    expect(results(events)).toEqual([
      'DENIED: tool call denied: plan mode is on: you are planning, and write_file (it writes) does not run while planning. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
    ])
  })

  it('-p asks no questions: a write is denied with a clear line unless --yes, --mode or a rule allows it', async () => {
    const script = [{ toolCalls: [write('notes.txt', 'hello')], answer: 'Tried.' }]
    const denied = setup(script)
    const run = await runDemo(['-p', 'take a note', '--data-dir', denied.data], { cwd: denied.cwd, env: denied.env })
    expect(run.stderr).toContain(
      '! denied write_file: write 5 bytes to notes.txt (-p asks no questions: allow it with --yes, a --mode that allows it, or a rule in ~/.dsh/settings.json)\n',
    )
    expect(existsSync(join(denied.cwd, 'notes.txt'))).toBe(false)

    const edits = setup(script)
    const accepted = await runDemo(['-p', 'take a note', '--mode', 'accept-edits', '--data-dir', edits.data], { cwd: edits.cwd, env: edits.env })
    expect(accepted.stderr).not.toContain('! denied')
    expect(accepted.stderr).toMatch(/· accept-edits mode\n/)
    expect(readFileSync(join(edits.cwd, 'notes.txt'), 'utf8')).toBe('hello')

    const ruled = setup(script)
    writeTree(ruled.env.HOME, { '.dsh/settings.json': JSON.stringify({ permissions: { rules: [{ tool: 'write_file', match: { path: '*.txt' }, decision: 'allow' }] } }) })
    await runDemo(['-p', 'take a note', '--data-dir', ruled.data], { cwd: ruled.cwd, env: ruled.env })
    expect(readFileSync(join(ruled.cwd, 'notes.txt'), 'utf8')).toBe('hello')
  })

  it('--mode bypass runs commands without asking; --mode plan refuses them; an unknown mode is a usage error', async () => {
    const script = [{ toolCalls: [{ name: 'shell', arguments: { command: 'echo made > made.txt' } }], answer: 'Ran.' }]
    const bypass = setup(script)
    await runDemo(['-p', 'run it', '--mode', 'bypass', '--data-dir', bypass.data], { cwd: bypass.cwd, env: bypass.env })
    expect(readFileSync(join(bypass.cwd, 'made.txt'), 'utf8')).toBe('made\n')

    const plan = setup(script)
    const planned = await runDemo(['-p', 'run it', '--mode', 'plan', '--yes', '--data-dir', plan.data], { cwd: plan.cwd, env: plan.env })
    expect(existsSync(join(plan.cwd, 'made.txt'))).toBe(false)
    expect(planned.stderr.split('\n').slice(0, 2)).toEqual(['· permission mode default → plan', '▸ shell {"command":"echo made > made.txt"}'])
    expect(results(onlySession(plan.data).events)).toEqual([
      'DENIED: tool call denied: plan mode is on: you are planning, and only read-only commands run while planning; here "> made.txt" redirects output into a file. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
    ])

    const bad = await runDemo(['-p', 'x', '--mode', 'yolo'], { cwd: plan.cwd, env: plan.env })
    expect([bad.status, bad.stderr]).toEqual([2, 'dsh-demo: --mode: "yolo" is not a mode (default, accept-edits, plan, bypass)\n'])
  })

  it('a workspace’s .dsh/settings.json waits for /trust; the trust is kept in ~/.dsh, not in the workspace', async () => {
    const { cwd, data, env } = setup([
      { toolCalls: [write('a.txt', 'one')], answer: 'First.' },
      { toolCalls: [write('b.txt', 'two')], answer: 'Second.' },
    ])
    writeTree(cwd, { '.dsh/settings.json': JSON.stringify({ permissions: { rules: [{ tool: 'write_file', decision: 'allow' }] } }) })
    const demo = startDemo(['--data-dir', data], { cwd, env })
    await demo.waitFor(/^> /m)
    expect(demo.stdout()).toContain(`! ${join(cwd, '.dsh/settings.json')} is not applied: you have not trusted this workspace yet (/trust applies its 1 rule and remembers it)\n`)
    demo.write('write a\n')
    await demo.waitFor(/\[y\]es \/ \[n\]o/)
    demo.write('n\n')
    await demo.waitFor(/· turn 1 done/)
    demo.write('/trust\n')
    await demo.waitFor(/trusted this workspace: the 1 rule of .* apply from now on/)
    demo.write('write b\n')
    await demo.waitFor(/· turn 2 done/)
    demo.end()
    expect(await demo.exited).toBe(0)
    expect([existsSync(join(cwd, 'a.txt')), readFileSync(join(cwd, 'b.txt'), 'utf8')]).toEqual([false, 'two'])
    expect(Object.keys(JSON.parse(readFileSync(join(env.HOME, '.dsh/trusted-workspaces.json'), 'utf8')).workspaces)).toEqual([cwd])
  })
})
