import { describe, expect, it } from 'vitest'
import { PermissionsError, type PermissionMode } from '@deepseek-ai/dsh-permissions'
import { decisions, harness, modeMessages, ran, tempDir } from './helpers'

/** One call of each effect; how each ends: `ok`, `asked → ok`, or the denial code. */
async function matrix(mode: PermissionMode) {
  const root = tempDir('dsh-ws-')
  const h = await harness({ permissions: { mode, allowBypass: mode === 'bypass', root } })
  const agent = await h.agent()
  const run = async (name: string, args: Record<string, unknown>) => {
    const before = h.asked.length
    h.answers.push('allow')
    const { code } = await h.call(agent, name, args)
    const asked = h.asked.length > before
    if (!asked) h.answers.pop()
    return `${asked ? 'asked → ' : ''}${code}`
  }
  return {
    read: await run('read_thing', { path: 'README.md' }),
    writeInside: await run('write_thing', { path: 'src/a.ts' }),
    writeOutside: await run('write_thing', { path: '/etc/hosts' }),
    readOnlyCommand: await run('shell', { command: 'git status && ls' }),
    command: await run('shell', { command: 'rm -rf build' }),
    network: await run('fetch_thing', { url: 'https://example.com' }),
    undeclared: await run('mystery', {}),
  }
}

describe('each mode against each effect (R-PRM-2)', () => {
  it('default: reads run; writes, commands, network calls and undeclared effects ask', async () => {
    expect(await matrix('default')).toEqual({
      read: 'ok',
      writeInside: 'asked → ok',
      writeOutside: 'asked → ok',
      readOnlyCommand: 'asked → ok',
      command: 'asked → ok',
      network: 'asked → ok',
      undeclared: 'asked → ok',
    })
  })

  it('accept-edits: writes inside the workspace run without asking; outside, and everything else that is not a read, asks', async () => {
    expect(await matrix('accept-edits')).toEqual({
      read: 'ok',
      writeInside: 'ok',
      writeOutside: 'asked → ok',
      readOnlyCommand: 'asked → ok',
      command: 'asked → ok',
      network: 'asked → ok',
      undeclared: 'asked → ok',
    })
  })

  it('accept-edits still asks before a write into a .git directory or the workspace’s .dsh (hooks, git config, permission rules), unless a rule of the person’s allows it', async () => {
    const root = tempDir('dsh-ws-')
    const h = await harness({ permissions: { mode: 'accept-edits', root, rules: [{ tool: 'write_thing', match: { path: '.dsh/notes/**' }, decision: 'allow' }] } })
    const agent = await h.agent()
    const outcome = async (path: string) => {
      const before = h.asked.length
      h.answers.push('allow')
      const { code } = await h.call(agent, 'write_thing', { path })
      const asked = h.asked.length > before
      if (!asked) h.answers.pop()
      return `${asked ? 'asked → ' : ''}${code}`
    }
    const paths = ['.git/hooks/pre-commit', '.git/config', 'vendor/lib/.git/config', '.GIT/hooks/post-checkout', './.dsh/settings.json', '.dsh', '.dsh/notes/today.md', '.gitignore', '.github/workflows/ci.yml', 'src/.git-blame-ignore', 'docs/.dsh/x']
    const outcomes: Record<string, string> = {}
    for (const path of paths) outcomes[path] = await outcome(path)
    expect(outcomes).toEqual({
      '.git/hooks/pre-commit': 'asked → ok',
      '.git/config': 'asked → ok',
      'vendor/lib/.git/config': 'asked → ok',
      '.GIT/hooks/post-checkout': 'asked → ok',
      './.dsh/settings.json': 'asked → ok',
      '.dsh': 'asked → ok',
      '.dsh/notes/today.md': 'ok',
      '.gitignore': 'ok',
      '.github/workflows/ci.yml': 'ok',
      'src/.git-blame-ignore': 'ok',
      'docs/.dsh/x': 'ok',
    })
    expect(decisions(agent.session.events).filter((d) => d.rule === 'mode accept-edits: a write to .git or .dsh asks').length).toBe(6)
  })

  it('plan: only reads and read-only commands run; everything else is denied without asking', async () => {
    expect(await matrix('plan')).toEqual({
      read: 'ok',
      writeInside: 'DENIED',
      writeOutside: 'DENIED',
      readOnlyCommand: 'ok',
      command: 'DENIED',
      network: 'DENIED',
      undeclared: 'DENIED',
    })
  })

  it('bypass: everything runs without asking', async () => {
    expect(await matrix('bypass')).toEqual({
      read: 'ok',
      writeInside: 'ok',
      writeOutside: 'ok',
      readOnlyCommand: 'ok',
      command: 'ok',
      network: 'ok',
      undeclared: 'ok',
    })
  })
})

describe('plan mode', () => {
  it('a refused call is the result the model reads, saying it is planning; the log holds the decision', async () => {
    const h = await harness({ permissions: { mode: 'plan' } })
    const agent = await h.agent()
    ran.length = 0
    expect(await h.call(agent, 'write_thing', { path: 'notes.md' })).toEqual({
      code: 'DENIED',
      text: 'Error: tool call denied: plan mode is on: you are planning, and write_thing (it writes) does not run while planning. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
    })
    expect(await h.call(agent, 'shell', { command: 'git status && git commit -am wip' })).toEqual({
      code: 'DENIED',
      text: 'Error: tool call denied: plan mode is on: you are planning, and only read-only commands run while planning; here git commit is not a read-only git command. Keep exploring with tools that only read; when the plan is ready, call exit_plan_mode with it.',
    })
    expect(ran).toEqual([])
    expect(h.asked).toEqual([])
    expect(decisions(agent.session.events)).toEqual([
      { tool: 'write_thing', decision: 'deny', rule: 'plan mode: read-only', mode: 'plan' },
      { tool: 'shell', decision: 'deny', rule: 'plan mode: read-only', mode: 'plan' },
    ])
  })

  it('still lets nothing write through the shell: commit, redirects, sed -i, substitutions (peers’ plan-mode escapes)', async () => {
    const h = await harness({ permissions: { mode: 'plan', rules: [{ tool: 'shell', decision: 'allow' }] } })
    const agent = await h.agent()
    ran.length = 0
    const codes: Record<string, string> = {}
    for (const command of ['git commit -m wip', 'echo done > notes.md', 'cat a >> b', "sed -i 's/a/b/' a.ts", 'ls $(touch x)', 'git status; rm -rf .', 'bash -c "rm x"']) {
      codes[command] = (await h.call(agent, 'shell', { command })).code
    }
    expect(Object.values(codes)).toEqual(Array(7).fill('DENIED'))
    // An allow rule for the whole shell tool does not lift plan mode either.
    expect(ran).toEqual([])
    expect((await h.call(agent, 'shell', { command: 'git log -3 | cat' })).code).toBe('ok')
  })

  it('a broad ask rule does not turn plan mode into "asks first": writes are still refused without a question', async () => {
    const h = await harness({ permissions: { mode: 'plan', rules: [{ tool: '*', decision: 'ask' }] } })
    const agent = await h.agent()
    expect((await h.call(agent, 'write_thing', { path: 'a.ts' })).code).toBe('DENIED')
    // The reporter's config of Kilo #12053 (a broad ask with a read-only allow), and its commands.
    h.root.permissions.remember(agent, { tool: 'shell', command: 'ls' }, 'allow')
    for (const command of ['rm -rf x', "echo 'pwned' > src/main.rs", "python - <<'PY'\nopen('a','w')\nPY"]) {
      expect((await h.call(agent, 'shell', { command })).code, command).toBe('DENIED')
    }
    expect(h.asked).toEqual([])
    // Reads still ask: that is what the rule says.
    h.answers.push('allow')
    expect((await h.call(agent, 'read_thing', { path: 'a.ts' })).code).toBe('ok')
    expect(h.asked).toEqual(['read_thing: call with {"path":"a.ts"}'])
  })

  it('exit_plan_mode outside plan mode says there is nothing to approve', async () => {
    const h = await harness()
    const agent = await h.agent()
    expect(await h.call(agent, 'exit_plan_mode', { plan: 'do it' })).toEqual({
      code: 'NOT_IN_PLAN_MODE',
      text: 'Error: you are not in plan mode (the mode is default), so there is no plan to approve; go ahead with the task.',
    })
    expect(h.asked).toEqual([])
  })
})

describe('mode changes', () => {
  it('reach the model as one injected message, logged as permission/mode; the system prompt and tools stay byte-identical', async () => {
    const h = await harness({ model: { script: ['first', 'second'] } })
    const agent = await h.agent()
    agent.followup('hello')
    await agent.whenIdle()
    h.root.permissions.setMode(agent, 'plan', { cause: 'person' })
    agent.followup('now plan')
    await agent.whenIdle()
    const [before, after] = h.model.requests
    expect(after!.system).toEqual(before!.system)
    expect(after!.tools).toEqual(before!.tools)
    // The earlier request is a prefix of the later one: one appended message, nothing rewritten.
    expect(after!.messages.slice(0, before!.messages.length + 1)).toEqual([...before!.messages, after!.messages[before!.messages.length]])
    expect(after!.messages.slice(before!.messages.length).map((m) => m.content.map((b) => ('text' in b ? b.text : b.type)).join(''))).toEqual([
      'first',
      '[Permission mode: plan] The person changed the permission mode. Explore and read as much as you need, but change nothing: calls that write files, run commands (other than read-only ones such as ls, cat, grep, git status, git log, git diff) or use the network are refused. When your plan is ready, call exit_plan_mode with it; the person reviews it, and only their approval ends plan mode.',
      'now plan',
    ])
    expect(agent.session.events.filter((e) => e.type === 'permission/mode').map((e) => e.data)).toEqual([{ mode: 'plan', previous: 'default', cause: 'person' }])
  })

  it('an agent starting in a mode other than default is told at once; setting the same mode again says nothing', async () => {
    const h = await harness({ permissions: { mode: 'accept-edits' } })
    const agent = await h.agent()
    await agent.whenIdle()
    h.root.permissions.setMode(agent, 'accept-edits')
    expect(modeMessages(agent.session.events)).toEqual([
      '[Permission mode: accept-edits] File edits inside the workspace run without asking (except in .git and .dsh); commands and network calls still ask the person first.',
    ])
  })

  it('bypass is refused unless it was allowed explicitly', async () => {
    const h = await harness()
    const agent = await h.agent()
    expect(() => h.root.permissions.setMode(agent, 'bypass')).toThrow(PermissionsError)
    expect(() => h.root.permissions.setMode(agent, 'bypass')).toThrow('bypass mode is only allowed when it was chosen explicitly at start (allowBypass)')
    expect(() => h.root.permissions.setMode(agent, 'yolo' as never)).toThrow('"yolo" is not a permission mode (plan, default, accept-edits, bypass)')
    await expect(harness({ permissions: { mode: 'bypass' } })).rejects.toMatchObject({ code: 'BYPASS_NOT_ALLOWED' })
  })
})
