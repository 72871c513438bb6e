import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { faultsPlugin, startDemo, tempDir, workspace } from './helpers'

/** A workspace whose scripted model calls `tool` (from the faults fixture), which never settles. */
function stuckWorkspace(tool: 'hang' | 'read_fifo'): { cwd: string; env: Record<string, string> } {
  const cwd = workspace()
  writeFileSync(join(cwd, 'dsh.config.json'), JSON.stringify({ scripted: { script: [{ toolCalls: [{ name: tool, arguments: {} }], answer: 'never reached' }] } }))
  const env: Record<string, string> = { DSH_DEMO_PLUGIN: faultsPlugin }
  if (tool === 'read_fifo') {
    const fifo = join(tempDir(), 'fifo')
    execFileSync('mkfifo', [fifo])
    env.DSH_TEST_FIFO = fifo
  }
  return { cwd, env }
}

// An exit the person asked for either closes down (status 130) or, when the close cannot finish
// because something hangs, ends the process by SIGINT; both are "interrupted" to a shell.
const INTERRUPTED = [130, 'SIGINT']

// Issue 15.1/15.2: after a frozen turn Ctrl-C was ignored, and the second one hung inside process.exit.
describe.concurrent('dsh-demo: Ctrl-C always ends the process', { timeout: 240_000 }, () => {
  it('interactive: a second Ctrl-C exits while a tool never settles', async () => {
    const { cwd, env } = stuckWorkspace('hang')
    const demo = startDemo(['--data-dir', tempDir()], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('go\n')
    await demo.waitFor(/^▸ hang \{\}$/m)
    demo.write('\x03')
    await demo.waitFor(/\^C cancelling the turn/)
    demo.write('\x03')
    expect(INTERRUPTED).toContain(await demo.exited)
  })

  it('interactive: a third Ctrl-C ends the process at once, without waiting for the close', async () => {
    const { cwd, env } = stuckWorkspace('hang')
    const demo = startDemo(['--data-dir', tempDir()], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('go\n')
    await demo.waitFor(/^▸ hang \{\}$/m)
    demo.write('\x03\x03\x03')
    expect(await demo.exited).toBe('SIGINT')
  })

  it('interactive: exits when a tool left a file operation stuck in the kernel (process.exit would wait for it forever)', async () => {
    const { cwd, env } = stuckWorkspace('read_fifo')
    const demo = startDemo(['--data-dir', tempDir()], { cwd, env })
    await demo.waitFor(/^> /m)
    demo.write('go\n')
    await demo.waitFor(/^▸ read_fifo \{\}$/m)
    demo.write('\x03')
    await demo.waitFor(/\^C cancelling the turn/)
    demo.write('\x03')
    // Whether the close finished or not, Node cannot exit normally with the open() pending: SIGINT.
    expect(await demo.exited).toBe('SIGINT')
  })

  it('-p: the second SIGINT exits while a tool never settles, and says so', async () => {
    const { cwd, env } = stuckWorkspace('hang')
    const demo = startDemo(['-p', 'go', '--data-dir', tempDir()], { cwd, env })
    await demo.waitFor(/^▸ hang \{\}$/m, 1, 'stderr')
    demo.child.kill('SIGINT')
    await demo.waitFor(/\^C cancelling the turn/, 1, 'stderr')
    demo.child.kill('SIGINT')
    await demo.waitFor(/\^C exiting/, 1, 'stderr')
    expect(INTERRUPTED).toContain(await demo.exited)
    expect(demo.stdout()).toBe('')
  })

  it('-p: a third SIGINT ends the process at once', async () => {
    const { cwd, env } = stuckWorkspace('read_fifo')
    const demo = startDemo(['-p', 'go', '--data-dir', tempDir()], { cwd, env })
    await demo.waitFor(/^▸ read_fifo \{\}$/m, 1, 'stderr')
    demo.child.kill('SIGINT')
    await demo.waitFor(/\^C cancelling the turn/, 1, 'stderr')
    demo.child.kill('SIGINT')
    await demo.waitFor(/\^C exiting/, 1, 'stderr')
    demo.child.kill('SIGINT')
    expect(await demo.exited).toBe('SIGINT')
  })
})
