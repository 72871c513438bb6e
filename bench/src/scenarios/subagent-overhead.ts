/**
 * Scenario 11, subagent overhead (PLUGINS §9: a foreground `task` child's
 * overhead beyond its own turns is ≤ 1.5× a bare `ctx.agents.create` +
 * dispose in the same run). The spine in memory (no persistence), with
 * dsh-tasks, dsh-subagents (one read-only agent type) and dsh-tool-subagent.
 * The run alternates `calls` bare agents (create, then dispose, no turn)
 * with `calls` foreground `task` calls through `ctx.tools.execute` on one
 * parent, each child answering in one model call. A child's own turns are
 * timed from its `agent/status` (`running` → `idle`); the overhead of a call
 * is its duration minus that. For reference, a plain agent doing the same
 * work without dsh-subagents (create, the same one-call turn, dispose) is
 * timed the same way: what any agent that runs a turn costs beyond it.
 * Reported: the medians, and the ratio of the
 * median overhead to the median bare create + dispose, in wall time and in
 * CPU time (`process.cpuUsage`), which a loaded machine's descheduling does
 * not inflate.
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
    // Wall time, and CPU time (process.cpuUsage: what the work cost, also when a loaded machine deschedules the process).
    const cpu = () => {
      const used = process.cpuUsage()
      return (used.user + used.system) / 1000
    }
    let turnWall = 0
    let turnCpu = 0
    let childWall = 0
    let childCpu = 0
    spine.root.on('agent/status', (agent, status) => {
      if (agent === parent || !/-sub-|^bench-plain-/.test(String(agent.id))) return
      if (status === 'running') {
        turnWall = performance.now()
        turnCpu = cpu()
      } else {
        childWall += performance.now() - turnWall
        childCpu += cpu() - turnCpu
      }
    })
    const args = JSON.stringify({ description: 'look around', prompt: 'Look around and report.', agentType: 'explore' })
    let id = 0
    const bare = async () => {
      const w0 = performance.now()
      const c0 = cpu()
      const handle = await agents.create({ sessionId: `bench-bare-${++id}` as never, agentOptions: { provider: dsh.PROVIDER, model: dsh.MODEL } })
      await handle.dispose()
      return { wall: performance.now() - w0, cpu: cpu() - c0 }
    }
    // The same child's work without dsh-subagents: create, one turn with the same prompt, dispose.
    const plain = async () => {
      childWall = 0
      childCpu = 0
      const w0 = performance.now()
      const c0 = cpu()
      const handle = await agents.create({ sessionId: `bench-plain-${++id}` as never, agentOptions: { provider: dsh.PROVIDER, model: dsh.MODEL } })
      handle.agent.followup('Look around and report.')
      await handle.agent.whenIdle()
      await handle.dispose()
      return { wall: performance.now() - w0 - childWall, cpu: cpu() - c0 - childCpu }
    }
    const task = async () => {
      childWall = 0
      childCpu = 0
      const w0 = performance.now()
      const c0 = cpu()
      const result = await tools.execute({ id: CallId(`c${++id}`), name: 'task', arguments: args }, { agent: parent })
      const wall = performance.now() - w0
      const used = cpu() - c0
      if (result.error) throw new Error(`task failed: ${result.error.message}`)
      return { wall, cpu: used, turnWall: childWall, turnCpu: childCpu }
    }
    for (let i = 0; i < params.warmup; i++) {
      await bare()
      await plain()
      await task()
    }
    const bareWall: number[] = []
    const bareCpu: number[] = []
    const taskWall: number[] = []
    const turnWalls: number[] = []
    const overheadWall: number[] = []
    const overheadCpu: number[] = []
    const plainCpu: number[] = []
    // Interleaved, so a change of the machine's load falls on both alike.
    for (let i = 0; i < params.calls; i++) {
      const b = await bare()
      bareWall.push(b.wall)
      bareCpu.push(b.cpu)
      plainCpu.push((await plain()).cpu)
      const t = await task()
      taskWall.push(t.wall)
      turnWalls.push(t.turnWall)
      overheadWall.push(t.wall - t.turnWall)
      overheadCpu.push(t.cpu - t.turnCpu)
    }
    const us = (values: number[]) => median(values) * 1000
    return {
      bareUs: us(bareWall),
      taskUs: us(taskWall),
      childTurnUs: us(turnWalls),
      overheadUs: us(overheadWall),
      ratio: median(overheadWall) / median(bareWall),
      bareCpuUs: us(bareCpu),
      overheadCpuUs: us(overheadCpu),
      cpuRatio: median(overheadCpu) / median(bareCpu),
      plainCpuUs: us(plainCpu),
      plainCpuRatio: median(plainCpu) / median(bareCpu),
    }
  } finally {
    await spine.dispose()
  }
}

export default defineScenario<Params>({
  id: 'subagent-overhead',
  title: '11. Subagent overhead',
  describe: (p) =>
    `${p.calls} foreground task calls (a read-only child answering in one model call) interleaved with ${p.calls} bare ctx.agents.create + dispose and ${p.calls} plain agents running the same turn, after ${p.warmup} of each; overhead = call minus the child's own turn (running → idle)`,
  subjects: ['dsh'],
  metrics: [
    { key: 'bareUs', label: 'bare create + dispose', unit: 'µs', digits: 0, compare: false },
    { key: 'taskUs', label: 'foreground task call', unit: 'µs', digits: 0, compare: false },
    { key: 'childTurnUs', label: "the child's own turn", unit: 'µs', digits: 0, compare: false },
    { key: 'overheadUs', label: 'overhead beyond its turn', unit: 'µs', digits: 0, compare: false },
    { key: 'ratio', label: 'overhead / bare (wall)', unit: '×', digits: 2, compare: false, budget: { op: '<=', limit: 1.5, source: 'PLUGINS §9' } },
    { key: 'bareCpuUs', label: 'bare create + dispose, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'overheadCpuUs', label: 'overhead beyond its turn, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'cpuRatio', label: 'overhead / bare (CPU)', unit: '×', digits: 2, compare: false, budget: { op: '<=', limit: 1.5, source: 'PLUGINS §9' } },
    { key: 'plainCpuUs', label: 'a plain agent with that turn, beyond it, CPU', unit: 'µs', digits: 0, compare: false },
    { key: 'plainCpuRatio', label: 'plain agent beyond its turn / bare (CPU)', unit: '×', digits: 2, compare: false },
  ],
  params: (mode) => (mode === 'full' ? { calls: 1000, warmup: 200 } : { calls: 20, warmup: 5 }),
  runs: (mode) => (mode === 'full' ? 3 : 1),
  run: subagentOverhead,
})
