/**
 * Scenario: compaction (PLUGINS §9, R-CMP-1, R-CMP-2, R-CMP-6).
 *
 * 1. A long session on a small window: `turns` turns (prompts of 50 to 400
 *    characters, a tool round reading 200 to 3,000 characters every fourth
 *    turn, answers of 100 to 800 characters, all from a seeded generator) on a
 *    model with an 8,000-token window and a 1,000-token output limit, with
 *    dsh-compaction at its defaults. The bench model counts tokens its own
 *    way, not the meter's (a token per 3 bytes of each message's JSON, ids,
 *    roles and keys included, plus the system text and the tools' JSON), reports
 *    that count as usage, and refuses a request over the window with
 *    `CONTEXT_OVERFLOW`, as a provider would. Figures: requests over the window
 *    (the agent's and the summarizer's; must be 0), the largest request's share
 *    of the window, the share of requests whose bytes extend the previous
 *    request's between two compactions (must be 100%), the compactions (summaries
 *    and prunes), and turns that failed.
 * 2. The meter alone: `meterSteps` steps of a bare session (a `turn/start`
 *    and a prompt every fifth step; each step 10 streamed chunks, an answer
 *    with usage, and a tool call and its result in two of five steps), read by
 *    a `TokenMeter` step by step (`update()`, `estimate()`, the comparison)
 *    with nothing compacting; the figure is the process CPU time of those
 *    calls per step (≤ 5 µs), the wall time beside it.
 */
import type { Agent } from '@deepseek-ai/dsh-agent'
import Agents from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import Compaction, { SUMMARY_SYSTEM_PROMPT, TokenMeter } from '@deepseek-ai/dsh-compaction'
import Llm, { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, type LlmRequest } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionId, type Session } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools, { defineTool } from '@deepseek-ai/dsh-tools'
import { Context } from 'cordis'
import { z } from 'zod'
import { defineScenario, type Metrics } from '../lib/scenario.ts'

interface Params {
  turns: number
  window: number
  meterSteps: number
}

const MAX_OUTPUT = 1_000
const WORDS = 'the parser reads each line splits key and value trims spaces and stores them in a map tests cover empty lines comments and quoted values'.split(' ')

/** A seeded generator (mulberry32): the same session on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** About `length` characters of words. */
function words(next: () => number, length: number): string {
  let text = ''
  while (text.length < length) text += `${WORDS[Math.floor(next() * WORDS.length)]} `
  return text.slice(0, length)
}

/** The bench model's own token count: a token per 3 bytes of JSON, not the meter's characters / 4. */
function modelTokens(request: LlmRequest): number {
  let bytes = Buffer.byteLength(request.system ?? '') + Buffer.byteLength(JSON.stringify(request.tools ?? []))
  for (const message of request.messages) bytes += Buffer.byteLength(JSON.stringify(message))
  return Math.ceil(bytes / 3)
}

/** The bytes an adapter is handed: system, tools, then each message as JSON. */
function requestBytes(request: LlmRequest): string {
  let bytes = JSON.stringify({ system: request.system ?? '', tools: request.tools ?? [] })
  for (const message of request.messages) bytes += `\n${JSON.stringify(message)}`
  return bytes
}

const read = defineTool({
  name: 'read_file',
  description: 'Reads a file of the workspace.',
  parameters: z.object({ path: z.string(), size: z.number() }),
  isConcurrencySafe: () => true,
  execute: ({ size }) => words(random(size), size),
})

async function longSession(params: Params): Promise<Metrics> {
  const next = random(19)
  const overWindow: number[] = []
  let largest = 0
  let previous: string | undefined
  let pairs = 0
  let extended = 0
  let agentRequests = 0
  let summaryRequests = 0
  /** Set when a compaction lands: the next agent request starts a new run of prefix-stable requests. */
  let compacted = false
  const respond = (request: LlmRequest): ScriptReply => {
    const tokens = modelTokens(request)
    largest = Math.max(largest, tokens)
    if (tokens > params.window) {
      overWindow.push(tokens)
      return { error: { code: 'CONTEXT_OVERFLOW', message: `This model's maximum context length is ${params.window} tokens; the request has ${tokens}.` } }
    }
    if (request.system === SUMMARY_SYSTEM_PROMPT) {
      summaryRequests++
      const summary = words(next, 600)
      return { text: summary, usage: { inputTokens: tokens, outputTokens: Math.ceil(summary.length / 3) } }
    }
    agentRequests++
    const bytes = requestBytes(request)
    if (previous !== undefined && !compacted) {
      pairs++
      if (bytes.startsWith(previous)) extended++
    }
    previous = bytes
    compacted = false
    const last = request.messages.at(-1)!
    const prompt = last.content[0]?.type === 'text' ? last.content[0].text : ''
    const asksTool = last.source.kind === 'user' && prompt.startsWith('Read')
    const reply: ScriptReply = asksTool
      ? { toolCalls: [{ name: 'read_file', arguments: { path: 'src/config.ts', size: 200 + Math.floor(next() * 2_800) } }] }
      : { text: words(next, 100 + Math.floor(next() * 700)) }
    const output = Math.ceil((JSON.stringify(reply).length) / 3)
    return { ...reply, usage: { inputTokens: tokens, outputTokens: output } }
  }

  const root = new Context()
  await root.plugin(Llm)
  await root.plugin(Sessions)
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'You are a coding agent running a benchmark.', persona: '' })
  await root.plugin(Agents)
  root.llm.registerAdapter(['scripted'], new ScriptedModel({ record: false, models: [{ id: 'bench-small', contextWindow: params.window, maxOutputTokens: MAX_OUTPUT }], respond }))
  root.tools.register(read)
  await root.plugin(AgentLoop, { maxParallelToolCalls: 10, agents: [] })
  await root.plugin(Compaction)
  root.on('session/event', (_session, event) => {
    if (event.type === 'compaction/summary' || event.type === 'compaction/prune') compacted = true
  })
  const handle = await root.agents.create({ sessionId: SessionId('bench-compaction'), agentOptions: { provider: 'scripted', model: 'bench-small' } })
  const agent: Agent = handle.agent
  let failed = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let turn = 0; turn < params.turns; turn++) {
    const text = turn % 4 === 3 ? `Read src/config.ts and check item ${turn}. ${words(next, 40)}` : `Item ${turn}: ${words(next, 50 + Math.floor(next() * 350))}`
    agent.followup(text)
    await agent.whenIdle()
    const end = agent.session.events.at(-1)!
    if (end.type === 'turn/end' && end.data.reason.kind !== 'completed') failed++
  }
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const status = root.compaction.status(agent)
  let summaries = 0
  let prunes = 0
  for (let seq = 0; seq < agent.session.events.length; seq++) {
    const type = agent.session.typeAt(seq)
    if (type === 'compaction/summary') summaries++
    else if (type === 'compaction/prune') prunes++
  }
  await handle.dispose()
  return {
    turns: params.turns,
    agentRequests,
    summaryRequests,
    overWindow: overWindow.length,
    largestShare: (100 * largest) / params.window,
    extendShare: pairs ? (100 * extended) / pairs : 100,
    summaries,
    prunes,
    failedTurns: failed,
    finalShare: 100 * (status.share ?? 0),
    msPerTurn: wallMs / params.turns,
    cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / params.turns,
  }
}

/** One meter step's events on a bare session. */
function appendStep(session: Session, turn: number, step: number, withTool: boolean, prompt: string | undefined): void {
  session.append('step/start', { turn, step })
  if (prompt !== undefined) session.append('user/message', { message: createUserMessage(prompt) })
  const chunkSeqs: number[] = []
  for (let i = 0; i < 10; i++) chunkSeqs.push(session.append('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text: 'word ' } }).seq)
  const callId = CallId(`call_${turn}_${step}`)
  const content = withTool
    ? [{ type: 'text' as const, text: 'word '.repeat(10) }, { type: 'tool-call' as const, id: callId, name: 'read_file', arguments: '{"path":"a.ts"}' }]
    : [{ type: 'text' as const, text: 'word '.repeat(10) }]
  const message = createAssistantMessage(content, { source: { kind: 'model', provider: 'p', model: 'm' } })
  session.append('assistant/message', { turn, step, message, chunkSeqs, usage: { inputTokens: 1_000, outputTokens: 25 }, finishReason: { kind: withTool ? 'tool-calls' : 'stop' } })
  if (withTool) {
    session.append('tool/call', { turn, step, callId, name: 'read_file', arguments: '{"path":"a.ts"}' })
    session.append('tool/result', { turn, step, message: createToolResultMessage({ callId, content: 'line of the file\n'.repeat(20) }) })
  }
  session.append('step/end', { turn, step })
}

/**
 * The meter alone (R-CMP-1): the session is built first, then a meter reads
 * it step by step (`update(end)` up to each step's end, `estimate()`, the
 * comparison), so the process CPU time measured is the meter's own, not the
 * appends'.
 */
async function meterAlone(params: Params): Promise<Metrics> {
  const root = new Context()
  await root.plugin(Sessions)
  const session = root.sessions.create('bench-meter')
  const ends: number[] = []
  let turn = 0
  for (let i = 0; i < params.meterSteps; i++) {
    const step = (i % 5) + 1
    if (step === 1) {
      if (turn > 0) session.append('turn/end', { turn, reason: { kind: 'completed' } })
      session.append('turn/start', { turn: ++turn, trigger: { kind: 'prompt' } })
    }
    appendStep(session, turn, step, step % 2 === 1 && step < 5, step === 1 ? `Item ${i}: check it.` : undefined)
    ends.push(session.events.length)
  }
  const meter = new TokenMeter(session)
  const limit = Number.MAX_SAFE_INTEGER
  let triggered = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < ends.length; i++) {
    meter.update(ends[i])
    if (meter.estimate() > limit) triggered++
  }
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return {
    meterSteps: params.meterSteps,
    meterUsPerStep: (cpu.user + cpu.system) / params.meterSteps,
    meterWallUsPerStep: (wallMs * 1_000) / params.meterSteps,
    meterTriggered: triggered,
    meterEntries: meter.entries.length,
  }
}

export default defineScenario<Params>({
  id: 'compaction',
  title: '9. Compaction',
  describe: (p) =>
    `${p.turns} turns on a ${p.window}-token window (a tool round every fourth turn; the model counts a token per 3 bytes of JSON and refuses requests over the window), dsh-compaction at its defaults; then the meter alone over ${p.meterSteps} steps with nothing compacting`,
  subjects: ['dsh'],
  metrics: [
    { key: 'agentRequests', label: 'agent requests', unit: '', digits: 0, compare: false },
    { key: 'summaryRequests', label: 'summary requests', unit: '', digits: 0, compare: false },
    { key: 'overWindow', label: 'requests over the window', unit: '', digits: 0, compare: false, budget: { op: '<=', limit: 0, source: 'PLUGINS §9' } },
    { key: 'largestShare', label: 'largest request (model count) / window', unit: '%', digits: 1, compare: false },
    { key: 'extendShare', label: 'requests extending the previous one between compactions', unit: '%', digits: 1, compare: false, budget: { op: '>=', limit: 100, source: 'PLUGINS §9' } },
    { key: 'summaries', label: 'summaries', unit: '', digits: 0, compare: false },
    { key: 'prunes', label: 'prunes', unit: '', digits: 0, compare: false },
    { key: 'failedTurns', label: 'turns that failed', unit: '', digits: 0, compare: false, budget: { op: '<=', limit: 0, source: 'R-CMP-3' } },
    { key: 'msPerTurn', label: 'wall time per turn (compaction included)', unit: 'ms', digits: 3, compare: false },
    { key: 'meterUsPerStep', label: 'meter alone, CPU per step', unit: 'µs', digits: 2, compare: false, budget: { op: '<=', limit: 5, source: 'PLUGINS §9' } },
    { key: 'meterWallUsPerStep', label: 'meter alone, wall time per step', unit: 'µs', digits: 2, compare: false },
  ],
  params: (mode) => (mode === 'full' ? { turns: 10_000, window: 8_000, meterSteps: 100_000 } : { turns: 300, window: 8_000, meterSteps: 2_000 }),
  // Deterministic (a seeded session): one run says all but the time figures.
  runs: () => 1,
  run: async (_subject, params) => ({ ...(await longSession(params)), ...(await meterAlone(params)) }),
})
