import type fc from 'fast-check'
import { z } from 'zod'
import { Context } from 'cordis'
import Agents, { type Agent, type AgentHandle, type AgentMessage } from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import Llm, { type GenerateOptions, type LlmAdapter, type MessageId, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ControlledCall } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionId, type Session } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools, { defineTool } from '@deepseek-ai/dsh-tools'
import { tick } from './driver'
import { DEFAULT_REPLY, misbehaves, scriptReply, type Reply } from './program'

/** One model call, as the adapter saw it start. */
export interface CallRecord {
  /** The 0-based call index (the scripted model's `requests[index]`). */
  readonly index: number
  /** The log length when the call was dispatched: the request must be what the log says up to here. */
  readonly logLength: number
  /** The step that was open when the call was dispatched. */
  readonly turn: number | undefined
  readonly step: number | undefined
  readonly reply: Reply
  /** How much of the log a settled flush covered when the call was dispatched (its length when that flush started). */
  readonly durableLength: number
}

/** One successful admission call. */
export interface AdmissionRecord {
  readonly kind: 'followup' | 'queue' | 'steer' | 'inject'
  readonly id: MessageId
  /** The text of the input (its single text block). */
  readonly text: string
  /** Whether it carried one context, and where the context goes. */
  readonly shape: 'plain' | 'separate' | 'prefix'
  /** The log length when it was admitted. */
  readonly logLength: number
  /**
   * Where the loop stood: no turn open (`idle`; `held` while a maintenance task runs), inside a one-shot injection
   * turn being written (`one-shot`), while a prompt turn's claim was being
   * published (`opening`), between the steps of a driver turn, or inside one
   * of its steps. `turn` and `step` number them.
   */
  readonly where: 'idle' | 'held' | 'one-shot' | 'opening' | 'between-steps' | 'in-step'
  readonly turn: number | undefined
  readonly step: number | undefined
}

/** A turn that a cancel or dispose reached while it was open. */
export interface AbortRecord {
  readonly by: 'cancel' | 'dispose'
  readonly turn: number
  /** Whether this was the first abort of that turn (the one that takes effect). */
  readonly effective: boolean
  readonly cause: string
  readonly keepInbox: boolean
}

/** One `runMaintenance()` call: whether its task started and ended, and how its promise settled. */
export interface MaintenanceRecord {
  readonly n: number
  /** Whether `dispose()` had been called when it was requested. */
  readonly afterDispose: boolean
  /** Whether it was requested from inside the agent's own open turn (it must reject `WOULD_DEADLOCK`). */
  readonly ownTurn: boolean
  started: boolean
  ended: boolean
  /** `resolved`, or the code it rejected with; undefined while pending. */
  outcome: string | undefined
}

/** A `session/flush` dispatch: the log length when it started and when this listener finished. */
export interface FlushRecord {
  readonly at: number
  end: number | undefined
}

/** The `agent/inbox/*` notifications, reduced to ids, in emission order. */
export type InboxNotice = readonly ['enqueue', MessageId] | readonly ['dequeue', MessageId] | readonly ['discard', readonly MessageId[]]

/** An `agent/*` notification or checkpoint dispatch, with when it happened. */
export interface AgentEventRecord {
  readonly name: string
  readonly detail: string
  /** Whether `handle.dispose()` had already resolved. */
  readonly afterDispose: boolean
}

export interface WorldOptions {
  /** The reply of each model call by index; calls past the end get `DEFAULT_REPLY`. */
  replies: readonly Reply[]
  maxParallelToolCalls: number
  /** How many consecutive provider failures of a turn an `agent/request-error` listener retries. */
  retries: number
}

/**
 * The real spine (no mocks of our packages) driven by a fast-check scheduler:
 * every model call is a controlled stream released chunk by chunk on
 * scheduler ticks, every tool body and every loop checkpoint listener waits on
 * ticks, and everything observable is recorded for the invariants.
 */
export interface World {
  readonly s: fc.Scheduler
  readonly root: Context
  readonly model: ScriptedModel
  readonly agent: Agent
  readonly handle: AgentHandle
  readonly session: Session
  readonly maxParallelToolCalls: number
  readonly retries: number
  readonly calls: CallRecord[]
  readonly admissions: AdmissionRecord[]
  readonly aborts: AbortRecord[]
  readonly flushes: FlushRecord[]
  readonly inboxNotices: InboxNotice[]
  readonly agentEvents: AgentEventRecord[]
  readonly statuses: string[]
  /** Each event of the agent's session as a `session/event` listener received it: its seq, its JSON then, and whether it was frozen. */
  readonly heard: Array<{ seq: number; json: string; frozen: boolean }>
  /** Problems seen while the program ran (a command's synchronous contract, tool overlap). */
  readonly violations: string[]
  /** Unique text for the next admitted input. */
  nextLabel(prefix: string): string
  /** The reasoning effort the `agent/request` listener sets on the next requests (none: the model's default). */
  effort: 'low' | 'high' | undefined
  /** Registers the `extra` tool, or removes it when it is registered: the next request's tools change. */
  toggleExtraTool(): void
  /**
   * One-shot reactions: the next `session/event` of type `on` runs `action`
   * synchronously inside the append's publication, the way a UI or policy
   * plugin calling the agent from a session listener would.
   */
  readonly reactions: Array<{ on: string; action: () => void }>
  /** Armed one-shot stops: the next `agent/turn-continuation` decides `stop` (terminal or not) instead of the default. */
  readonly stops: Array<{ terminal: boolean }>
  /** The stops decided, with their turn. */
  readonly stopped: Array<{ turn: number; terminal: boolean }>
  /** Each `runMaintenance()` call, in call order, with how it went. */
  readonly maintenance: MaintenanceRecord[]
  /** Armed one-shot faults: the next dispatch of checkpoint `on` to the world's listener fails (`throw`: at once, synchronously; `late`: after its tick). */
  readonly faults: Array<{ on: string; how: 'throw' | 'late' | 'malformed' }>
  /** The faults that fired, with the turn that was open (or opening) then. */
  readonly faulted: Array<{ checkpoint: string; turn: number | undefined; how: 'throw' | 'late' | 'malformed' }>
  dispose: Promise<void> | undefined
  /** `dispose()` was called (set before the call: admissions from inside it must throw `DISPOSED`). */
  disposeStarted: boolean
  /** The turns a `cancel()` call is under way for (a reaction inside it may cancel again). */
  readonly cancelling: number[]
  /** How many armed reactions have run so far. */
  reactionsRun: number
  disposeSettled: boolean
  /** The log length when dispose resolved. */
  logLengthAtDispose: number | undefined
}

/** Builds a world with one published agent (provider `prop`, model `m`). */
export async function buildWorld(s: fc.Scheduler, options: WorldOptions): Promise<World> {
  const root = new Context()
  await root.plugin(Llm)
  await root.plugin(Sessions)
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'You are a property-test agent.', persona: '' })
  await root.plugin(Agents)

  const calls: CallRecord[] = []
  const violations: string[] = []
  const model = new ScriptedModel({
    respond: (_request, index) => scriptReply(options.replies[index] ?? DEFAULT_REPLY),
    models: [{ id: 'm', reasoningEfforts: ['low', 'high'] }],
  })
  let world!: World

  // The adapter the loop talks to: takes control of each call as it starts, records where the
  // log stood, and releases the scripted reply one chunk per scheduler tick.
  const adapter: LlmAdapter = {
    resolveModel: (id) => model.resolveModel(id),
    stream(request: GenerateOptions): AsyncIterable<StreamChunk> {
      const index = model.calls
      const reply = options.replies[index] ?? DEFAULT_REPLY
      const step = world.session.position.openStep
      calls.push({
        index,
        logLength: world.session.events.length,
        turn: step?.turn,
        step: step?.step,
        reply,
        durableLength: Math.max(0, ...flushes.filter((record) => record.end !== undefined).map((record) => record.at)),
      })
      if (misbehaves(reply)) {
        // Recorded by the scripted model (its stream is never read), then the adapter's own misbehaviour.
        model.stream(request)
        if (reply.kind === 'adapter-throws') throw new Error('the adapter broke before streaming (scripted)')
        if (reply.kind === 'not-iterable') return { chunks: [] } as unknown as AsyncIterable<StreamChunk>
        return (async function* () {
          await tick(s, `model#${index} malformed chunk`)
          yield { type: 'bogus' } as unknown as StreamChunk
        })()
      }
      const call = model.control()
      const stream = model.stream(request)
      void feed(s, call, index)
      return stream
    },
  }
  root.llm.registerAdapter(['prop'], adapter)

  // Tool bodies: each waits on ticks; the pool discipline (R-TOOL-3) is checked as bodies start.
  const running = new Map<string, 'safe' | 'exclusive'>()
  const enter = (callId: string, mode: 'safe' | 'exclusive') => {
    const exclusiveRunning = [...running.values()].includes('exclusive')
    if (mode === 'exclusive' && running.size > 0) violations.push(`exclusive call ${callId} started while ${[...running.keys()].join(', ')} ran`)
    if (mode === 'safe' && exclusiveRunning) violations.push(`call ${callId} started while an exclusive call ran`)
    if (mode === 'safe' && running.size >= options.maxParallelToolCalls) {
      violations.push(`call ${callId} started with ${running.size} calls running (maxParallelToolCalls ${options.maxParallelToolCalls})`)
    }
    running.set(callId, mode)
  }
  const args = z.object({ n: z.number() })
  root.tools.register(
    defineTool({
      name: 'ok',
      description: 'Answers after one tick.',
      parameters: args,
      isConcurrencySafe: () => true,
      async execute(_args, run) {
        enter(run.callId, 'safe')
        try {
          await tick(s, `tool ok ${run.callId}`)
          return `ok ${run.callId}`
        } finally {
          running.delete(run.callId)
        }
      },
    }),
  )
  root.tools.register(
    defineTool({
      name: 'slow',
      description: 'Answers after three ticks, ignoring cancellation.',
      parameters: args,
      isConcurrencySafe: () => true,
      async execute(_args, run) {
        enter(run.callId, 'safe')
        try {
          for (let i = 1; i <= 3; i++) await tick(s, `tool slow ${run.callId} ${i}/3`)
          return `slow ${run.callId}`
        } finally {
          running.delete(run.callId)
        }
      },
    }),
  )
  root.tools.register(
    defineTool({
      name: 'fail',
      description: 'Throws after one tick.',
      parameters: args,
      isConcurrencySafe: () => true,
      async execute(_args, run) {
        enter(run.callId, 'safe')
        try {
          await tick(s, `tool fail ${run.callId}`)
          throw new Error('the tool failed on purpose')
        } finally {
          running.delete(run.callId)
        }
      },
    }),
  )
  root.tools.register(
    defineTool({
      name: 'obedient',
      description: 'Answers after one tick, or stops as soon as it is cancelled.',
      parameters: args,
      isConcurrencySafe: () => true,
      async execute(_args, run) {
        enter(run.callId, 'safe')
        try {
          await new Promise<void>((resolve, reject) => {
            const onAbort = () => reject(new Error('stopped by the signal'))
            if (run.signal.aborted) return onAbort()
            run.signal.addEventListener('abort', onAbort, { once: true })
            void tick(s, `tool obedient ${run.callId}`).then(() => {
              run.signal.removeEventListener('abort', onAbort)
              resolve()
            })
          })
          return `obedient ${run.callId}`
        } finally {
          running.delete(run.callId)
        }
      },
    }),
  )
  root.tools.register(
    defineTool({
      name: 'exclusive',
      description: 'Runs alone; defers a context.',
      parameters: args,
      async execute(_args, run) {
        enter(run.callId, 'exclusive')
        try {
          await tick(s, `tool exclusive ${run.callId}`)
          run.deferContext({ label: `note ${run.callId}`, content: `context from ${run.callId}` })
          return `exclusive ${run.callId}`
        } finally {
          running.delete(run.callId)
        }
      },
    }),
  )

  // Observers: each checkpoint yields to the scheduler (so commands land inside it) and records itself.
  const agentEvents: AgentEventRecord[] = []
  const note = (name: string, detail = '') => agentEvents.push({ name, detail, afterDispose: world?.disposeSettled ?? false })
  /**
   * Takes the armed fault of checkpoint `name`, if any (`World.faults`): a `throw` fault throws here, out of the
   * listener's synchronous call; a `late` one returns true, and the listener rejects after its tick (a cancel may
   * land in between).
   */
  const fault = (name: string, turn: number | undefined): boolean | 'malformed' => {
    const index = world.faults.findIndex((armed) => armed.on === name)
    if (index < 0) return false
    const armed = world.faults.splice(index, 1)[0]!
    world.faulted.push({ checkpoint: name, turn, how: armed.how })
    if (armed.how === 'throw') throw new Error(`${name} listener failed on purpose`)
    return armed.how === 'malformed' ? 'malformed' : true
  }
  const failLate = (name: string): never => {
    throw new Error(`${name} listener failed on purpose after a wait`)
  }
  root.on('agent/prompt-submit', (_agent, _content, _source, _signal, next) => {
    note('agent/prompt-submit')
    const late = fault('agent/prompt-submit', world.session.position.openTurn?.turn)
    return (async () => {
      await tick(s, 'hook prompt-submit')
      if (late) failLate('agent/prompt-submit')
      return next()
    })()
  })
  root.on('agent/pre-step', (_agent, turn, step) => {
    note('agent/pre-step', `${turn}.${step}`)
    const late = fault('agent/pre-step', turn)
    return (async () => {
      await tick(s, `hook pre-step ${turn}.${step}`)
      if (late) failLate('agent/pre-step')
    })()
  })
  root.on('agent/request', (_agent, turn, step, _config, _signal, next) => {
    note('agent/request', `${turn}.${step}`)
    const late = fault('agent/request', turn)
    return (async () => {
      await tick(s, `hook request ${turn}.${step}`)
      if (late) failLate('agent/request')
      const config = await next()
      return world.effort ? { ...config, reasoningEffort: world.effort } : config
    })()
  })
  root.on('agent/step-result', (_agent, turn, step, _message, _signal, next) => {
    note('agent/step-result', `${turn}.${step}`)
    const late = fault('agent/step-result', turn)
    return (async () => {
      await tick(s, `hook step-result ${turn}.${step}`)
      if (late === true) failLate('agent/step-result')
      // A malformed answer the loop's checks pass and the log's data check refuses (a field JSON drops).
      if (late === 'malformed') return { ...(await next()), note: undefined } as never
      return next()
    })()
  })
  root.on('agent/post-step', (_agent, turn, step) => {
    note('agent/post-step', `${turn}.${step}`)
    const late = fault('agent/post-step', turn)
    return (async () => {
      await tick(s, `hook post-step ${turn}.${step}`)
      if (late) failLate('agent/post-step')
    })()
  })
  root.on('agent/request-error', (_agent, turn, step, _error, _failure, prior, _signal, next) => {
    note('agent/request-error', `${turn}.${step}`)
    const late = fault('agent/request-error', turn)
    return (async () => {
      await tick(s, `hook request-error ${turn}.${step}`)
      if (late) failLate('agent/request-error')
      // A retry policy with a budget of consecutive failures, like dsh-llm-retry without its delays.
      if (prior.length < options.retries) return { kind: 'retry' as const }
      return next()
    })()
  })
  root.on('agent/turn-continuation', (_agent, turn, _decision, _signal, next) => {
    note('agent/turn-continuation', `${turn}`)
    const late = fault('agent/turn-continuation', turn)
    return (async () => {
      await tick(s, `hook turn-continuation ${turn}`)
      if (late) failLate('agent/turn-continuation')
      const stop = world.stops.shift()
      if (stop === undefined) return next()
      // A policy's stop (a budget): terminal, or natural (turn-stopping and the last steering drain follow).
      world.stopped.push({ turn, terminal: stop.terminal })
      return stop.terminal ? { kind: 'stop' as const, by: 'budget', terminal: true } : { kind: 'stop' as const, by: 'policy' }
    })()
  })
  root.on('agent/turn-stopping', (_agent, turn) => {
    note('agent/turn-stopping', `${turn}`)
    const late = fault('agent/turn-stopping', turn)
    return (async () => {
      await tick(s, `hook turn-stopping ${turn}`)
      if (late) failLate('agent/turn-stopping')
    })()
  })
  const inboxNotices: InboxNotice[] = []
  const statuses: string[] = []
  // A reaction armed on a notification runs inside it, after the world recorded it (as on a session event).
  const react = (on: string) => {
    const index = world.reactions.findIndex((reaction) => reaction.on === on)
    if (index < 0) return
    world.reactionsRun++
    world.reactions.splice(index, 1)[0]!.action()
  }
  root.on('agent/inbox/enqueue', (_agent, message: AgentMessage) => {
    note('agent/inbox/enqueue', message.id)
    inboxNotices.push(['enqueue', message.id])
    react('agent/inbox/enqueue')
  })
  root.on('agent/inbox/dequeue', (_agent, message: AgentMessage) => {
    note('agent/inbox/dequeue', message.id)
    inboxNotices.push(['dequeue', message.id])
    react('agent/inbox/dequeue')
  })
  root.on('agent/inbox/discard', (_agent, messages: readonly AgentMessage[]) => {
    note('agent/inbox/discard', messages.map((message) => message.id).join(','))
    inboxNotices.push(['discard', messages.map((message) => message.id)])
    react('agent/inbox/discard')
  })
  root.on('agent/status', (_agent, status) => {
    note('agent/status', status)
    statuses.push(status)
    react(`agent/status:${status}`)
  })
  root.on('agent/error', (_agent, turn, step) => {
    note('agent/error', `${turn}.${step}`)
    react('agent/error')
  })
  root.on('agent/cancel-requested', (_agent, cause) => {
    note('agent/cancel-requested', cause.kind)
    react('agent/cancel-requested')
  })
  root.on('agent/disposed', () => note('agent/disposed'))
  const heard: World['heard'] = []
  root.on('session/event', (session, event) => {
    if (session.id === 'prop') heard.push({ seq: event.seq, json: JSON.stringify(event), frozen: Object.isFrozen(event) && Object.isFrozen(event.data) })
    note('session/event', event.type)
    react(event.type)
  })
  const flushes: FlushRecord[] = []
  root.on('session/flush', async (session) => {
    const record: FlushRecord = { at: session.events.length, end: undefined }
    flushes.push(record)
    await tick(s, `flush at ${record.at}`)
    record.end = session.events.length
  })

  await root.plugin(AgentLoop, { maxParallelToolCalls: options.maxParallelToolCalls, agents: [] })
  const handle = await root.agents.create({ sessionId: SessionId('prop'), agentOptions: { provider: 'prop', model: 'm' } })
  let labels = 0
  let removeExtraTool: (() => void) | undefined
  const extraTool = defineTool({ name: 'extra', description: 'Registered and removed while the agent runs.', parameters: args, execute: () => 'extra' })
  world = {
    s,
    root,
    model,
    agent: handle.agent,
    handle,
    session: handle.agent.session,
    maxParallelToolCalls: options.maxParallelToolCalls,
    retries: options.retries,
    calls,
    admissions: [],
    aborts: [],
    flushes,
    inboxNotices,
    agentEvents,
    statuses,
    heard,
    violations,
    nextLabel: (prefix) => `${prefix}${++labels}`,
    effort: undefined,
    reactions: [],
    toggleExtraTool() {
      if (removeExtraTool) {
        removeExtraTool()
        removeExtraTool = undefined
      } else removeExtraTool = root.tools.register(extraTool)
    },
    faults: [],
    faulted: [],
    maintenance: [],
    stops: [],
    stopped: [],
    dispose: undefined,
    disposeStarted: false,
    cancelling: [],
    reactionsRun: 0,
    disposeSettled: false,
    logLengthAtDispose: undefined,
  }
  return world
}

/** Releases a controlled call's scripted reply one chunk per scheduler tick until the stream closes. */
async function feed(s: fc.Scheduler, call: ControlledCall, index: number): Promise<void> {
  for (let chunk = 1; call.closeState === undefined; chunk++) {
    await tick(s, `model#${index} chunk ${chunk}`)
    if (call.closeState !== undefined) return
    await call.step()
  }
}
