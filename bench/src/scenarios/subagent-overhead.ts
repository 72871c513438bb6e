/**
 * Scenario 11, subagent overhead (PLUGINS §9: a foreground `task` child's
 * overhead beyond its own turns is ≤ 1.5× a bare `ctx.agents.create` +
 * dispose in the same run). The spine in memory (no persistence), with
 * dsh-tasks, dsh-subagents (one read-only agent type) and dsh-tool-subagent.
 * One run interleaves `calls` rounds of three measurements:
 *
 * - bare: `ctx.agents.create` then dispose, no turn;
 * - plain: an agent created, given the child's prompt, idle after its one
 *   model call, disposed: what an agent with that turn costs, without
 *   dsh-subagents;
 * - task: a foreground `task` call through `ctx.tools.execute` on one
 *   parent, whose child answers in the same one model call.
 *
 * The child's own turn costs what the plain agent's does beyond a bare one
 * (`plain − bare`), so a call's overhead beyond its child's turn is
 * `task − (plain − bare)`: the child's creation and disposal, the tool
 * pipeline, the run's queueing, setup, records and events. Medians, in wall
 * time and in CPU time (`process.cpuUsage`, which a loaded machine's
 * descheduling does not inflate); the budget is checked on both.
 */
import { defineScenario, type Metrics } from '../lib/scenario.ts'
import { median } from '../lib/measure.ts'

interface Params {
  calls: number
  warmup: number
}

async function subagentOverhead(_subject: string, params: Params): Promise<Metrics> {
  const dsh = await import('../subjects/dsh.ts')
  const { default: Tasks } = await import('@deepseek-ai/dsh-tasks')
  const { default: Subagents } = await import('@deepseek-ai/dsh-subagents')
  const { default: ToolSubagent } = await import('@deepseek-ai/dsh-tool-subagent')
  const { CallId } = await import('@deepseek-ai/dsh-llm')
  const { defineTool } = await import('@deepseek-ai/dsh-tools')
  const { z } = await import('zod')
  const look = defineTool({ name: 'look', description: 'Looks.', parameters: z.object({ at: z.string() }), effect: 'read', isConcurrencySafe: () => true, execute: ({ at }) => at })
  const spine = await dsh.spine({ respond: dsh.answerResponder, tools: [look] })
  try {
    await spine.root.plugin(Tasks)
    await spine.root.plugin(Subagents, { types: [{ name: 'explore', description: 'Reads.', systemPrompt: 'You explore and report.', tools: ['look'] }] })
    await spine.root.plugin(ToolSubagent)
    const { agent: parent } = await spine.create('bench-parent')
    // Held once, as the loop holds it: a lookup through the context costs Cordis an Error per access.
    const tools = spine.root.tools
    const agents = spine.root.agents
    const cpu = () => {
      const used = process.cpuUsage()
      return (used.user + used.system) / 1000
    }
    const agentOptions = { provider: dsh.PROVIDER, model: dsh.MODEL }
    const prompt = 'Look around and report.'
    const args = JSON.stringify({ description: 'look around', prompt, agentType: 'explore' })
    let id = 0
    const timed = async (work: () => Promise<void>) => {
      const w0 = performance.now()
      const c0 = cpu()
      await work()
      return { wall: performance.now() - w0, cpu: cpu() - c0 }
    }
    const bare = () =>
      timed(async () => {
        const handle = await agents.create({ sessionId: `bench-bare-${++id}` as never, agentOptions })
        await handle.dispose()
      })
    const plain = () =>
      timed(async () => {
        const handle = await agents.create({ sessionId: `bench-plain-${++id}` as never, agentOptions })
        handle.agent.followup(prompt)
        await handle.agent.whenIdle()
        await handle.dispose()
      })
    const task = () =>
      timed(async () => {
        const result = await tools.execute({ id: CallId(`c${++id}`), name: 'task', arguments: args }, { agent: parent })
        if (result.error) throw new Error(`task failed: ${result.error.message}`)
      })
    for (let i = 0; i < params.warmup; i++) {
      await bare()
      await plain()
      await task()
    }
    const runs = { bare: [] as { wall: number; cpu: number }[], plain: [] as { wall: number; cpu: number }[], task: [] as { wall: number; cpu: number }[] }
    // Interleaved, so a change of the machine's load falls on all three alike.
    for (let i = 0; i < params.calls; i++) {
      runs.bare.push(await bare())
      runs.plain.push(await plain())
      runs.task.push(await task())
    }
    const us = (kind: keyof typeof runs, clock: 'wall' | 'cpu') => median(runs[kind].map((run) => run[clock])) * 1000
    const figures = (clock: 'wall' | 'cpu') => {
      const bareUs = us('bare', clock)
      const turnUs = us('plain', clock) - bareUs
      const overheadUs = us('task', clock) - turnUs
      return { bareUs, turnUs, taskUs: us('task', clock), overheadUs, ratio: overheadUs / bareUs }
    }
    const wall = figures('wall')
    const cpuFigures = figures('cpu')
    return {
      bareUs: wall.bareUs,
      turnUs: wall.turnUs,
      taskUs: wall.taskUs,
      overheadUs: wall.overheadUs,
      ratio: wall.ratio,
      bareCpuUs: cpuFigures.bareUs,
      turnCpuUs: cpuFigures.turnUs,
      taskCpuUs: cpuFigures.taskUs,
      overheadCpuUs: cpuFigures.overheadUs,
      cpuRatio: cpuFigures.ratio,
    }
  } finally {
    await spine.dispose()
  }
}

export default defineScenario<Params>({
  id: 'subagent-overhead',
  title: '11. Subagent overhead',
  describe: (p) =>
    `${p.calls} rounds (after ${p.warmup}) of a bare ctx.agents.create + dispose, a plain agent running the child's one-call turn, and a foreground task call whose read-only child runs that turn; overhead = task − (plain − bare)`,
  subjects: ['dsh'],
  metrics: [
    { key: 'bareUs', label: 'bare create + dispose', unit: 'µs', digits: 0, compare: false },
    { key: 'turnUs', label: "the child's turn (plain − bare)", unit: 'µs', digits: 0, compare: false },
    { key: 'taskUs', label: 'foreground task call', unit: 'µs', digits: 0, compare: false },
    { key: 'overheadUs', label: 'overhead beyond its turn', unit: 'µs', digits: 0, compare: false },
    { key: 'ratio', label: 'overhead / bare (wall)', unit: '×', digits: 2, compare: false, budget: { op: '<=', limit: 1.5, source: 'PLUGINS §9' } },
    { key: 'bareCpuUs', label: 'bare create + dispose, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'turnCpuUs', label: "the child's turn, CPU", unit: 'µs', digits: 0, compare: false },
    { key: 'taskCpuUs', label: 'foreground task call, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'overheadCpuUs', label: 'overhead beyond its turn, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'cpuRatio', label: 'overhead / bare (CPU)', unit: '×', digits: 2, compare: false, budget: { op: '<=', limit: 1.5, source: 'PLUGINS §9' } },
  ],
  params: (mode) => (mode === 'full' ? { calls: 1000, warmup: 200 } : { calls: 20, warmup: 5 }),
  runs: (mode) => (mode === 'full' ? 3 : 1),
  run: subagentOverhead,
})
