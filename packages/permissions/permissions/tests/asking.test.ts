import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { trace } from '@deepseek-ai/dsh-testkit'
import type { ApprovalResponse } from '@deepseek-ai/dsh-tools'
import { decisions, harness, modeMessages, ran, tempDir } from './helpers'

describe('asking (R-PRM-3)', () => {
  it('an ask the mode raises offers a scope; "always" is remembered for that session and mode only', async () => {
    const root = tempDir('dsh-ws-')
    const h = await harness({ permissions: { root } })
    const a = await h.agent('a')
    const b = await h.agent('b')
    h.answers.push((request) => ({ decision: 'allow', remember: request.scope }))
    expect((await h.call(a, 'write_thing', { path: 'src/cli/app.ts' })).code).toBe('ok')
    // The same scope runs without a question in the same session and mode…
    expect((await h.call(a, 'write_thing', { path: 'src/cli/other.ts' })).code).toBe('ok')
    // …not outside it, not in another session, and not in another mode.
    expect((await h.call(a, 'write_thing', { path: 'src/main.ts' })).code).toBe('DENIED')
    expect((await h.call(b, 'write_thing', { path: 'src/cli/app.ts' })).code).toBe('DENIED')
    h.root.permissions.setMode(a, 'accept-edits')
    h.root.permissions.setMode(a, 'default')
    expect(h.root.permissions.remembered(a)).toEqual([{ tool: 'write_thing', match: { path: 'src/cli/**' }, decision: 'allow' }])
    h.root.permissions.setMode(a, 'plan')
    expect(h.root.permissions.remembered(a)).toEqual([])
    expect((await h.call(a, 'write_thing', { path: 'src/cli/app.ts' })).code).toBe('DENIED')
    expect(h.asked).toEqual([
      'write_thing: call with {"path":"src/cli/app.ts"} [{"tool":"write_thing","path":"src/cli/**"}]',
      'write_thing: call with {"path":"src/main.ts"} [{"tool":"write_thing","path":"src/**"}]',
      'write_thing: call with {"path":"src/cli/app.ts"} [{"tool":"write_thing","path":"src/cli/**"}]',
    ])
    expect(decisions(a.session.events).slice(0, 3)).toEqual([
      { tool: 'write_thing', decision: 'ask', rule: 'mode default: write asks', mode: 'default', answer: 'allow', remember: { tool: 'write_thing', path: 'src/cli/**' } },
      { tool: 'write_thing', decision: 'allow', rule: 'remembered rule write_thing(path: "src/cli/**") → allow', mode: 'default' },
      { tool: 'write_thing', decision: 'ask', rule: 'mode default: write asks', mode: 'default', answer: 'deny' },
    ])
  })

  it('"always" is never written to a file: the user directory and the workspace stay as they were', async () => {
    const root = tempDir('dsh-ws-')
    const h = await harness({ permissions: { root } })
    const agent = await h.agent()
    h.answers.push((request) => ({ decision: 'allow', remember: request.scope }))
    expect((await h.call(agent, 'shell', { command: 'npm test' })).code).toBe('ok')
    expect(readdirSync(h.userDirectory)).toEqual([])
    expect(readdirSync(root)).toEqual([])
    expect(h.root.permissions.remembered(agent)).toEqual([{ tool: 'shell', match: { command: 'npm test' }, decision: 'allow' }])
  })

  it('"always" for a command that runs code named by its arguments (an interpreter, a shell, a wrapper) covers that script only, or is not offered', async () => {
    const h = await harness()
    const agent = await h.agent()
    const commands = ['python3 scripts/build.py --fast', 'bash deploy.sh', 'node -e "1"', 'timeout 5 rm -rf build', 'sudo /usr/bin/apt update', 'git status -s', 'npm test']
    for (const command of commands) {
      h.answers.push('deny')
      await h.call(agent, 'shell', { command })
    }
    expect(h.asked.map((question) => question.slice(question.lastIndexOf(' [') + 1))).toEqual([
      // "always allow python3" would allow `python3 -c 'anything'`.
      '[{"tool":"shell","command":"python3 scripts/build.py"}]',
      '[{"tool":"shell","command":"bash deploy.sh"}]',
      'shell: call with {"command":"node -e \\"1\\""}',
      'shell: call with {"command":"timeout 5 rm -rf build"}',
      'shell: call with {"command":"sudo /usr/bin/apt update"}',
      '[{"tool":"shell","command":"git status"}]',
      '[{"tool":"shell","command":"npm test"}]',
    ])
  })

  it('the question quotes a call’s arguments in full: a long command’s end is not cut off', async () => {
    const h = await harness()
    const agent = await h.agent()
    const command = `echo ${'a'.repeat(400)}; rm -rf ~/important`
    await h.call(agent, 'shell', { command })
    expect(h.asked).toEqual([`shell: call with ${JSON.stringify({ command })}`])
  })

  it('a remembered command covers each part: `npm test && rm -rf x` still asks', async () => {
    const h = await harness()
    const agent = await h.agent()
    h.answers.push((request) => ({ decision: 'allow', remember: request.scope }))
    expect((await h.call(agent, 'shell', { command: 'npm test -- --watch=false' })).code).toBe('ok')
    expect((await h.call(agent, 'shell', { command: 'npm test && npm test' })).code).toBe('ok')
    expect((await h.call(agent, 'shell', { command: 'npm test && rm -rf x' })).code).toBe('DENIED')
    expect((await h.call(agent, 'shell', { command: 'npm test > out.txt' })).code).toBe('DENIED')
    expect(h.asked).toEqual([
      'shell: call with {"command":"npm test -- --watch=false"} [{"tool":"shell","command":"npm test"}]',
      // A compound command or a redirection offers no "always".
      'shell: call with {"command":"npm test && rm -rf x"}',
      'shell: call with {"command":"npm test > out.txt"}',
    ])
  })

  it('a denial with feedback is the result the model reads; the log holds the decision and the answer', async () => {
    const h = await harness({ model: { script: [{ toolCalls: [{ name: 'shell', arguments: { command: 'npm install left-pad' } }], answer: 'Understood.' }] } })
    const agent = await h.agent()
    ran.length = 0
    h.answers.push({ decision: 'deny', feedback: 'use pnpm, not npm' })
    agent.followup('add left-pad')
    await agent.whenIdle()
    expect(ran).toEqual([])
    expect(trace(agent.session).filter((line) => /^(tool|permission)\//.test(line))).toEqual([
      'tool/call shell',
      'permission/decision',
      'tool/result DENIED "Error: tool call denied: not approved; the person said: use pnpm, not npm"',
    ])
    expect(decisions(agent.session.events)).toEqual([{ tool: 'shell', decision: 'ask', rule: 'mode default: execute asks', mode: 'default', answer: 'deny' }])
    // The model read it in its next request.
    const last = h.model.requests.at(-1)!.messages.at(-1)!
    expect(JSON.stringify(last.content)).toContain('the person said: use pnpm, not npm')
  })

  it('without an approval service an ask is denied, and the log still holds the decision', async () => {
    const h = await harness({ approval: false })
    const agent = await h.agent()
    expect(await h.call(agent, 'write_thing', { path: 'a' })).toEqual({
      code: 'DENIED',
      text: 'Error: tool call denied: approval required but no approval service is available',
    })
    expect(decisions(agent.session.events)).toEqual([{ tool: 'write_thing', decision: 'ask', rule: 'mode default: write asks', mode: 'default' }])
  })
})

describe('plan mode, then exit_plan_mode (R-PRM-2)', () => {
  const script = [
    {
      toolCalls: [{ name: 'write_thing', arguments: { path: 'src/a.ts' } }],
      answer: {
        toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: '1. Edit src/a.ts\n2. Run the tests' } }],
        answer: { toolCalls: [{ name: 'write_thing', arguments: { path: 'src/a.ts' } }], answer: 'Done.' },
      },
    },
  ]

  it('denies, then switches only on approval, and the model is told; the approved write then asks as in default mode', async () => {
    const h = await harness({ permissions: { mode: 'plan' }, model: { script } })
    const agent = await h.agent()
    ran.length = 0
    h.answers.push('allow', 'allow')
    agent.followup('change a.ts')
    await agent.whenIdle()
    expect(h.root.permissions.mode(agent)).toBe('default')
    expect(ran).toEqual(['write_thing {"path":"src/a.ts"}'])
    expect(h.asked).toEqual([
      'exit_plan_mode: leave plan mode (for default) and carry out this plan?\n\n1. Edit src/a.ts\n2. Run the tests',
      // No workspace root is known here, so no path scope is offered for "always".
      'write_thing: call with {"path":"src/a.ts"}',
    ])
    expect(trace(agent.session).filter((line) => /^(tool\/result|permission|user)/.test(line))).toEqual([
      'permission/mode',
      'user/message "[Permission mode: plan] Explore and read as much as you need, but change nothing: calls that write files, run commands (other than read-only ones such as ls, cat, grep, git status, git log, git diff) or use the network are refused. When your plan is ready, call exit_plan_mode with it; the person reviews it, and only their approval ends plan mode."',
      'user/message "change a.ts"',
      'permission/decision',
      'tool/result DENIED "Error: tool call denied: plan mode is on: you are planning, and write_thing (it writes) does not run while planning. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it."',
      'permission/decision',
      'permission/mode',
      'tool/result ok "The person approved the plan. Plan mode is over (the mode is now default): carry out the plan."',
      'user/message "[Permission mode: default] The person approved your plan. Reading runs freely; writing files, running commands and network calls ask the person first."',
      'permission/decision',
      'tool/result ok "write_thing done"',
    ])
  })

  it('a refused plan keeps plan mode, with the person’s feedback in the result', async () => {
    const h = await harness({ permissions: { mode: 'plan' }, model: { script } })
    const agent = await h.agent()
    ran.length = 0
    h.answers.push({ decision: 'deny', feedback: 'also update the README' })
    agent.followup('change a.ts')
    await agent.whenIdle()
    expect(h.root.permissions.mode(agent)).toBe('plan')
    expect(ran).toEqual([])
    expect(trace(agent.session).filter((line) => line.startsWith('tool/result'))).toEqual([
      expect.stringMatching(/^tool\/result DENIED "Error: tool call denied: plan mode is on/),
      'tool/result PLAN_NOT_APPROVED "Error: the person did not approve the plan, so you are still in plan mode; the person said: also update the README. Revise the plan (read more if you need to), then call exit_plan_mode again."',
      expect.stringMatching(/^tool\/result DENIED "Error: tool call denied: plan mode is on/),
    ])
    expect(modeMessages(agent.session.events)).toHaveLength(1)
  })

  it('no rule or remembered answer approves a plan: an allow-everything rule still asks the person', async () => {
    const h = await harness({ permissions: { mode: 'plan', rules: [{ tool: '*', decision: 'allow' }] }, model: { script } })
    const agent = await h.agent()
    agent.followup('change a.ts')
    await agent.whenIdle()
    expect(h.asked).toEqual(['exit_plan_mode: leave plan mode (for default) and carry out this plan?\n\n1. Edit src/a.ts\n2. Run the tests'])
    expect(h.root.permissions.mode(agent)).toBe('plan')
  })

  it('an approval that comes after the turn was cancelled leaves plan mode on: the result says why, the model is told nothing new', async () => {
    const h = await harness({ permissions: { mode: 'plan' }, model: { script: [{ toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: 'rewrite everything' } }], answer: 'ok' }] } })
    const agent = await h.agent()
    let approve!: (answer: ApprovalResponse) => void
    let shown!: () => void
    const planShown = new Promise<void>((resolve) => (shown = resolve))
    h.answers.push(() => {
      shown()
      // An approval UI that does not close its prompt on the call's signal, answered late.
      return new Promise<ApprovalResponse>((resolve) => (approve = resolve)) as never
    })
    agent.followup('plan it')
    await planShown
    agent.cancel({ kind: 'user' })
    approve('allow')
    await agent.whenIdle()
    expect(h.root.permissions.mode(agent)).toBe('plan')
    expect(trace(agent.session).filter((line) => /^(tool\/result|permission\/mode|turn\/end)/.test(line))).toEqual([
      'permission/mode',
      'turn/end 1 completed',
      'tool/result ABORTED "Error: tool call aborted"',
      'turn/end 2 aborted',
    ])
    expect(modeMessages(agent.session.events)).toHaveLength(1)
  })

  it('leaves plan mode for the mode the agent had before it', async () => {
    const h = await harness({ permissions: { mode: 'accept-edits' } })
    const agent = await h.agent()
    h.root.permissions.setMode(agent, 'plan')
    h.answers.push('allow')
    expect(await h.call(agent, 'exit_plan_mode', { plan: 'x' })).toEqual({
      code: 'ok',
      text: 'The person approved the plan. Plan mode is over (the mode is now accept-edits): carry out the plan.',
    })
    expect(existsSync(join(h.userDirectory, 'settings.json'))).toBe(false)
  })
})
