import { realpathSync, symlinkSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemorySessionPersistence, SessionId, memoryPersistence } from '@deepseek-ai/dsh-session'
import { trace } from '@deepseek-ai/dsh-testkit'
import WorkspaceTools from '@deepseek-ai/dsh-workspace-tools'
import type { PermissionsOptions } from '@deepseek-ai/dsh-permissions'
import { decisions, harness, modeMessages, tempDir, writeTree } from './helpers'

describe('a child agent is never more permissive than its parent (R-PRM-2a)', () => {
  it('a child created with parentSession follows its parent into plan mode and cannot leave it', async () => {
    const h = await harness({ permissions: { mode: 'accept-edits' } })
    const parent = await h.agent('parent')
    const child = await h.agent('child', { parent: 'parent' })
    expect(h.root.permissions.mode(child)).toBe('accept-edits')
    h.root.permissions.setMode(parent, 'plan')
    expect(h.root.permissions.mode(child)).toBe('plan')
    // The child's own calls are refused as planning…
    expect((await h.call(child, 'write_thing', { path: 'a' })).text).toBe(
      'Error: tool call denied: plan mode is on (your parent agent is planning): you are planning, and write_thing (it writes) does not run while planning. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
    )
    // …it cannot raise itself, nor leave plan mode through exit_plan_mode.
    expect(() => h.root.permissions.setMode(child, 'default')).toThrow('agent child cannot be in default mode: its parent is in plan mode, and a child is never more permissive than its parent')
    h.answers.push('allow')
    expect(await h.call(child, 'exit_plan_mode', { plan: 'escape' })).toEqual({
      code: 'PLAN_NOT_APPROVED',
      text: 'Error: your parent agent is in plan mode, so this agent stays in plan mode; give your plan in your answer instead.',
    })
    expect(h.asked).toEqual([])
    // The child was told, with the reason.
    expect(modeMessages(child.session.events).at(-1)).toMatch(/^\[Permission mode: plan\] Your parent agent's permission mode changed\. /)
    // When the parent leaves plan mode, the child is back to its own mode.
    h.root.permissions.setMode(parent, 'default')
    expect(h.root.permissions.mode(child)).toBe('default')
  })

  it('inherit(child, parent) links an agent created without the meta, at once', async () => {
    const h = await harness()
    const parent = await h.agent('p')
    const child = await h.agent('c')
    h.root.permissions.setMode(parent, 'plan')
    expect(h.root.permissions.mode(child)).toBe('default')
    h.root.permissions.inherit(child, parent)
    expect(h.root.permissions.mode(child)).toBe('plan')
    expect(() => h.root.permissions.inherit(parent, child)).toThrow('agent c descends from p: a parent link would make a loop')
  })

  it('a child whose parent is gone keeps the parent’s last mode as its cap', async () => {
    const h = await harness()
    const parent = await h.agent('p')
    h.root.permissions.setMode(parent, 'plan')
    const child = await h.agent('c', { parent: 'p' })
    await h.dispose(parent)
    expect(h.root.permissions.mode(child)).toBe('plan')
    expect(() => h.root.permissions.setMode(child, 'default')).toThrow(/its parent is in plan mode/)
  })
})

describe('a resumed session (R-PRM-3)', () => {
  it('starts in the configured mode, and the model is told when that differs from what its log last told it; nothing remembered survives', async () => {
    const backend = new MemorySessionPersistence()
    const first = await harness({ permissions: { mode: 'plan' }, before: (ctx) => ctx.plugin(memoryPersistence, { backend }) })
    const agent = await first.agent('s')
    first.root.permissions.remember(agent, { tool: 'shell' }, 'allow')
    await agent.whenIdle()
    await first.dispose(agent)
    const second = await harness({ before: (ctx) => ctx.plugin(memoryPersistence, { backend: backend.reopen() }) })
    const resumed = await second.root.agents.resume({ resumeSessionId: SessionId('s'), agentOptions: { provider: 'scripted', model: 'test-model' } })
    await resumed.agent.whenIdle()
    expect(second.root.permissions.mode(resumed.agent)).toBe('default')
    expect(second.root.permissions.remembered(resumed.agent, 'plan')).toEqual([])
    expect(resumed.agent.session.events.filter((e) => e.type === 'permission/mode').map((e) => e.data)).toEqual([
      { mode: 'plan', previous: 'default', cause: 'start' },
      { mode: 'default', previous: 'plan', cause: 'start' },
    ])
    expect(modeMessages(resumed.agent.session.events).map((text) => text.slice(0, 30))).toEqual(['[Permission mode: plan] Explor', '[Permission mode: default] Rea'])
    await resumed.dispose()
  })
})

describe('the repeat guard (R-PRM-2a)', () => {
  it('after three identical failing calls in a turn, the fourth is refused with the reason; a new turn starts over', async () => {
    const call = { name: 'flaky', arguments: { n: 1 } }
    const h = await harness({
      model: {
        script: [
          { toolCalls: [call], answer: { toolCalls: [call], answer: { toolCalls: [call], answer: { toolCalls: [{ name: 'flaky', arguments: { n: 1 } }, { name: 'flaky', arguments: { n: 2 } }], answer: 'I give up.' } } } },
          { toolCalls: [call], answer: 'Still broken.' },
        ],
      },
    })
    const agent = await h.agent()
    agent.followup('try')
    await agent.whenIdle()
    agent.followup('try again')
    await agent.whenIdle()
    expect(trace(agent.session).filter((line) => line.startsWith('tool/result'))).toEqual([
      'tool/result TOOL_ERROR "Error: still broken"',
      'tool/result TOOL_ERROR "Error: still broken"',
      'tool/result TOOL_ERROR "Error: still broken"',
      'tool/result DENIED "Error: tool call denied: this exact call (flaky with the same arguments) already failed 3 times in this turn, so it is not run again. Change the arguments or the approach, or tell the person what keeps failing."',
      // Other arguments are another call.
      'tool/result TOOL_ERROR "Error: still broken"',
      // A new turn starts counting again.
      'tool/result TOOL_ERROR "Error: still broken"',
    ])
    expect(decisions(agent.session.events).map((d) => d.rule)).toEqual(['mode default: read', 'mode default: read', 'mode default: read', 'repeat guard', 'mode default: read', 'mode default: read'])
  })
})

describe('with dsh-workspace-tools', () => {
  it('the workspace tools leave asking to the permissions: one question per call, none in bypass, the tools’ own question text', async () => {
    const root = tempDir('dsh-ws-')
    writeTree(root, { 'src/a.ts': 'export const a = 1\n' })
    const h = await harness({ permissions: { allowBypass: true } })
    // askBefore keeps its default: the workspace tools defer because ctx.permissions is mounted.
    await h.root.plugin(WorkspaceTools, { root, shell: { sandbox: 'off' } })
    expect(h.root.permissions.root).toBeUndefined()
    const agent = await h.agent()
    h.answers.push('allow')
    expect((await h.call(agent, 'write_file', { path: 'notes.txt', content: 'hi' })).code).toBe('ok')
    expect(h.asked).toEqual(['write_file: write 2 bytes to notes.txt'])
    h.root.permissions.setMode(agent, 'bypass')
    expect((await h.call(agent, 'write_file', { path: 'more.txt', content: 'hi' })).code).toBe('ok')
    expect(h.asked).toHaveLength(1)
  })

  it('reads the workspace root from the workspace tools: accept-edits runs edits inside without asking, never a write through a link out', async () => {
    const base = tempDir('dsh-ws-')
    const root = `${base}/ws`
    writeTree(base, { 'ws/src/a.ts': 'export const a = 1\n', 'outside/secret.txt': 'x\n' })
    symlinkSync(`${base}/outside`, `${root}/out`)
    const h = await harness({
      standIns: false,
      permissions: { mode: 'accept-edits' },
      before: (ctx) => ctx.plugin(WorkspaceTools, { root, shell: { sandbox: 'off' } }),
    })
    const agent = await h.agent()
    expect(h.root.permissions.root).toBe(root)
    expect((await h.call(agent, 'read_file', { path: 'src/a.ts' })).code).toBe('ok')
    expect((await h.call(agent, 'edit_file', { path: 'src/a.ts', old_string: '1', new_string: '2' })).code).toBe('ok')
    expect(h.asked).toEqual([])
    // A path through a symbolic link out of the workspace is not "inside": it is asked about
    // (and the workspace tools refuse it anyway).
    h.answers.push('allow')
    expect((await h.call(agent, 'write_file', { path: 'out/secret.txt', content: 'y' })).code).toBe('OUTSIDE_WORKSPACE')
    h.answers.push('allow')
    expect((await h.call(agent, 'shell', { command: 'echo hi' })).code).toBe('ok')
    expect(h.asked).toEqual([
      'write_file: write 1 bytes to out/secret.txt',
      'shell: run "echo hi" in the workspace. NOT sandboxed (the sandbox is turned off in the configuration (shell.sandbox: off)): the command runs with the full permissions of the user running the agent and can read and change files outside the workspace and use the network. [{"tool":"shell","command":"echo hi"}]',
    ])
  })
})

describe('path rules see through symbolic links and the root’s other spelling', () => {
  /**
   * A workspace given by a link (`ws` → `real-ws`, as `/tmp` → `/private/tmp` on macOS), with a
   * `secrets/` directory and `docs/keys`, a link to it inside the workspace.
   */
  async function linkedWorkspace(rules: PermissionsOptions['rules']) {
    const base = tempDir('dsh-ws-')
    writeTree(base, { 'real-ws/secrets/key.txt': 'KEY\n', 'real-ws/docs/readme.md': 'docs\n' })
    symlinkSync(`${base}/real-ws`, `${base}/ws`)
    symlinkSync('../secrets', `${base}/real-ws/docs/keys`)
    const h = await harness({
      standIns: false,
      permissions: { rules },
      before: (ctx) => ctx.plugin(WorkspaceTools, { root: `${base}/ws`, shell: { sandbox: 'off' } }),
    })
    return { h, agent: await h.agent(), realRoot: realpathSync(`${base}/ws`) }
  }

  it('a deny rule for secrets/** also denies the same files read through a link inside the workspace or by the real root’s path', async () => {
    const { h, agent, realRoot } = await linkedWorkspace([{ tool: '*', match: { path: 'secrets/**' }, decision: 'deny' }])
    const denied = { code: 'DENIED', text: 'Error: tool call denied: a permission rule forbids it (session rule *(path: "secrets/**") → deny)' }
    expect({
      direct: await h.call(agent, 'read_file', { path: 'secrets/key.txt' }),
      throughLink: await h.call(agent, 'read_file', { path: 'docs/keys/key.txt' }),
      byRealRoot: await h.call(agent, 'read_file', { path: `${realRoot}/secrets/key.txt` }),
    }).toEqual({ direct: denied, throughLink: denied, byRealRoot: denied })
  })

  it('a deny rule for secrets/** also covers the directory itself: grep or list_dir of secrets (or secrets/) is refused', async () => {
    const { h, agent } = await linkedWorkspace([{ tool: '*', match: { path: 'secrets/**' }, decision: 'deny' }])
    const denied = { code: 'DENIED', text: 'Error: tool call denied: a permission rule forbids it (session rule *(path: "secrets/**") → deny)' }
    expect({
      grep: await h.call(agent, 'grep', { pattern: 'KEY', path: 'secrets' }),
      grepSlash: await h.call(agent, 'grep', { pattern: 'KEY', path: 'secrets/' }),
      grepThroughLink: await h.call(agent, 'grep', { pattern: 'KEY', path: 'docs/keys' }),
      list: await h.call(agent, 'list_dir', { path: './secrets' }),
    }).toEqual({ grep: denied, grepSlash: denied, grepThroughLink: denied, list: denied })
    // Its siblings are not covered.
    expect((await h.call(agent, 'list_dir', { path: 'docs' })).code).toBe('ok')
  })

  it('a workspace given by a link still offers "always" for its own directories, and absolute allow rules in either spelling still apply', async () => {
    const { h, agent } = await linkedWorkspace([])
    await h.call(agent, 'read_file', { path: 'docs/readme.md' })
    h.answers.push('deny')
    await h.call(agent, 'edit_file', { path: 'docs/readme.md', old_string: 'docs', new_string: 'DOCS' })
    expect(h.asked).toEqual(['edit_file: edit docs/readme.md: replace 1 line with 1 line [{"tool":"edit_file","path":"docs/**"}]'])
    for (const spelling of ['given', 'real'] as const) {
      // The rule is added once the workspace exists (its path is only known then).
      const allowed = await linkedWorkspace([])
      const root = spelling === 'given' ? allowed.h.root.permissions.root! : allowed.realRoot
      allowed.h.root.permissions.remember(allowed.agent, { tool: 'edit_file', path: `${root}/docs/**` }, 'allow')
      await allowed.h.call(allowed.agent, 'read_file', { path: 'docs/readme.md' })
      expect((await allowed.h.call(allowed.agent, 'edit_file', { path: 'docs/readme.md', old_string: 'docs', new_string: 'DOCS' })).code, spelling).toBe('ok')
      expect(allowed.h.asked, spelling).toEqual([])
    }
  })

  it('an allow rule for docs/** does not allow an edit whose file lies elsewhere through a link: it asks', async () => {
    const { h, agent } = await linkedWorkspace([{ tool: 'edit_file', match: { path: 'docs/**' }, decision: 'allow' }])
    for (const path of ['docs/readme.md', 'docs/keys/key.txt']) expect((await h.call(agent, 'read_file', { path })).code).toBe('ok')
    expect((await h.call(agent, 'edit_file', { path: 'docs/readme.md', old_string: 'docs', new_string: 'DOCS' })).code).toBe('ok')
    expect(h.asked).toEqual([])
    expect(await h.call(agent, 'edit_file', { path: 'docs/keys/key.txt', old_string: 'KEY', new_string: 'PWNED' })).toEqual({
      code: 'DENIED',
      text: expect.stringContaining('tool call denied'),
    })
    // No "always" is offered: one for docs/keys/** would not cover a file that lies in secrets/.
    expect(h.asked).toEqual(['edit_file: edit docs/keys/key.txt: replace 1 line with 1 line'])
  })
})
