/**
 * Embedding the dsh spine in your own Cordis app, and writing a first plugin.
 *
 * Run it from the repository root:
 *   node --conditions=dsh-source --import tsx packages/runtime/agent-spine/examples/embed.ts
 * (tests/embed.test.ts runs it too, so it stays correct.)
 *
 * 1. Mount the spine bundle and a model adapter (here the offline scripted model).
 * 2. Register a tool and a plugin that listens to the agent events.
 * 3. Create an agent through `ctx.agents`, send it a prompt, wait for it, read its log.
 */
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { z } from 'zod'
import '@deepseek-ai/dsh-agent' // the agent/* event types (declared by merging into Cordis' Events)
import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import ScriptedPlugin from '@deepseek-ai/dsh-llm-scripted'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import { defineTool } from '@deepseek-ai/dsh-tools'

/**
 * A first plugin, written against `ctx.agents` and the `agent/*` events only
 * (never against the loop's internals): it stops any turn that has run
 * `maxSteps` steps, however much the model still wants to call tools. A
 * `terminal` stop also drops steering that arrives while the turn closes.
 */
export const StepBudget = {
  name: 'step-budget',
  inject: ['agents'],
  apply(ctx: Context, config: { maxSteps: number }) {
    ctx.on('agent/turn-continuation', async (agent, _turn, _default, _signal, next) => {
      const decision = await next()
      if (decision.kind === 'continue' && agent.session.position.lastStep >= config.maxSteps) {
        return { kind: 'stop', by: 'step-budget', terminal: true }
      }
      return decision
    })
  },
}

/** A tool: `defineTool` types the arguments from the zod schema and validates them before `execute`. */
export const addNumbers = defineTool({
  name: 'add_numbers',
  description: 'Add two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  isConcurrencySafe: () => true, // it touches nothing, so calls may overlap
  execute: ({ a, b }) => String(a + b),
})

/** Runs one prompt through an embedded spine and returns the session's log. */
export async function runEmbedded(prompt: string): Promise<{ answer: string; events: readonly AnySessionEvent[] }> {
  const app = new Context()
  // The spine: llm, sessions, system prompt, tools, agents, default model, retry, invariants, the loop.
  const spine = app.plugin(AgentSpine, {
    defaultModel: { provider: 'scripted', model: 'demo' },
    systemPrompt: { persona: 'You do arithmetic with the add_numbers tool.' },
  })
  await spine
  // The adapter stays outside the bundle: swap in @deepseek-ai/dsh-llm-openai for a real model.
  // This script makes the model call the tool again and again; the budget stops it after 2 steps.
  const again = { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 3 } }] }
  const model = app.plugin(ScriptedPlugin, { script: [{ ...again, answer: { ...again, answer: { ...again, answer: 'never reached' } } }] })
  const budget = app.plugin(StepBudget, { maxSteps: 2 })
  await Promise.all([model, budget])
  app.tools.register(addNumbers)

  // Create the agent through the public seam; the handle owns its teardown.
  const handle = await app.agents.create({ sessionId: SessionId('embed-example') })
  const agent = handle.agent
  let answer = ''
  agent.ctx.on('session/event', (_session, event) => {
    // UI plugins listen here; in the agent's scoped context they only see this agent's session.
    if (event.type === 'assistant/chunk' && event.data.chunk.type === 'text-delta') answer += event.data.chunk.text
  })
  agent.followup(prompt)
  await agent.whenIdle()
  const events = [...agent.session.events]
  await handle.dispose()
  for (const fiber of [budget, model, spine]) await fiber.dispose()
  return { answer, events }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { events } = await runEmbedded('What is 2 + 3? Check it as often as you like.')
  for (const event of events) if (event.type !== 'assistant/chunk') console.log(event.seq, event.type, JSON.stringify(event.data).slice(0, 100))
}
