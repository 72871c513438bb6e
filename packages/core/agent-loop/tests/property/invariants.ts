import { isDeepStrictEqual } from 'node:util'
import type { AgentMessage } from '@deepseek-ai/dsh-agent'
import { ABORTED_BEFORE_DISPATCH_TEXT } from '@deepseek-ai/dsh-agent-loop'
import type { ContentBlock, Message, MessageId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, SessionEvent } from '@deepseek-ai/dsh-session'
import { contextLabel, contextText } from './commands'
import { failureCode, toolResultCode, type ToolKind } from './program'
import type { InboxNotice, World } from './world'

/** What the invariants were checked after: `whenIdle()` resolving, or `handle.dispose()` resolving. */
export type Quiescence = 'idle' | 'disposed'

/** One step of a turn, as the log tells it. */
interface StepSummary {
  readonly step: number
  readonly startSeq: number
  anchor: SessionEvent<'assistant/message'> | undefined
  readonly chunkSeqs: number[]
  readonly toolCalls: SessionEvent<'tool/call'>[]
  readonly toolResults: SessionEvent<'tool/result'>[]
}

/** One turn, as the log tells it. */
interface TurnSummary {
  readonly turn: number
  readonly trigger: string
  readonly startSeq: number
  end: SessionEvent<'turn/end'> | undefined
  /** Where each step ended, by step number. */
  readonly stepEnds: Map<number, number>
  readonly steps: StepSummary[]
}

/**
 * Checks every invariant of a quiescent world and returns the violations, one
 * sentence each (empty when the world is sound). Pure: reads the log, the
 * recorded observations and the agent's public state.
 */
export function checkWorld(world: World, quiescence: Quiescence): string[] {
  const problems = [...world.violations]
  const events = world.session.events as readonly AnySessionEvent[]

  // seq is dense: equal to the index.
  events.forEach((event, index) => {
    if (event.seq !== index) problems.push(`event #${index} (${event.type}) has seq ${event.seq}`)
  })

  const turns = checkStructure(events, problems)
  checkTurnEnds(world, turns, problems)
  checkInbox(world, events, turns, quiescence, problems)
  checkAdmissions(world, events, turns, problems)
  checkPlacement(world, events, turns, problems)
  checkHistory(world, events, problems)
  checkRequests(world, events, turns, problems)
  checkFlushes(world, turns, problems)
  checkDurableRequests(world, events, problems)
  checkStatus(world, problems)
  checkMaintenance(world, quiescence, problems)
  if (quiescence === 'disposed') {
    for (const record of world.agentEvents) {
      if (record.afterDispose) problems.push(`${record.name} ${record.detail} was dispatched after dispose() resolved`)
    }
    if (world.logLengthAtDispose !== events.length) {
      problems.push(`the log grew after dispose() resolved (${world.logLengthAtDispose} → ${events.length} events)`)
    }
  }
  return problems
}

/**
 * Walks the log: turns and steps properly paired and numbered, everything
 * step-bound inside a step, one `assistant/message` per step whose chunk seqs
 * are the step's chunks, and every tool call of that message with exactly one
 * `tool/call` and one `tool/result`, in model order, before `step/end`.
 */
function checkStructure(events: readonly AnySessionEvent[], problems: string[]): TurnSummary[] {
  const turns: TurnSummary[] = []
  let turn: TurnSummary | undefined
  let step: StepSummary | undefined
  let lastTurn = 0
  const at = (event: AnySessionEvent) => `#${event.seq} ${event.type}`
  const requireStep = (event: AnySessionEvent): StepSummary | undefined => {
    if (!step) problems.push(`${at(event)} is outside a step`)
    return step
  }
  const closeStep = (event: AnySessionEvent, current: StepSummary) => {
    const calls = current.anchor ? toolCallIds(current.anchor.data.message.content) : []
    const logged = current.toolCalls.map((call) => call.data.callId)
    const results = current.toolResults.map((result) => resultCallId(result))
    if (!isDeepStrictEqual(logged, calls)) {
      problems.push(`${at(event)} ${turn?.turn}.${current.step}: tool/call ids ${JSON.stringify(logged)} ≠ the message's calls ${JSON.stringify(calls)}`)
    }
    if (!isDeepStrictEqual(results, calls)) {
      problems.push(`${at(event)} ${turn?.turn}.${current.step}: tool/result ids ${JSON.stringify(results)} ≠ the message's calls ${JSON.stringify(calls)}`)
    }
    current.toolResults.forEach((result, i) => {
      const call = current.toolCalls[i]
      if (call && call.seq > result.seq) problems.push(`${at(result)}: the result of ${call.data.callId} precedes its tool/call #${call.seq}`)
    })
  }

  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        if (turn) problems.push(`${at(event)} ${event.data.turn} while turn ${turn.turn} is open`)
        if (event.data.turn !== lastTurn + 1) problems.push(`${at(event)} numbers turn ${event.data.turn} after turn ${lastTurn}`)
        lastTurn = event.data.turn
        turn = { turn: event.data.turn, trigger: event.data.trigger.kind, startSeq: event.seq, end: undefined, steps: [], stepEnds: new Map() }
        turns.push(turn)
        break
      case 'turn/end':
        if (!turn || turn.turn !== event.data.turn) problems.push(`${at(event)} ${event.data.turn} does not close the open turn (${turn?.turn})`)
        if (step) problems.push(`${at(event)} closes turn ${event.data.turn} while step ${step.step} is open`)
        if (turn) turn.end = event
        turn = undefined
        step = undefined
        break
      case 'step/start': {
        if (!turn) {
          problems.push(`${at(event)} outside a turn`)
          break
        }
        if (step) problems.push(`${at(event)} ${event.data.turn}.${event.data.step} while step ${step.step} is open`)
        if (turn.trigger === 'injection') problems.push(`${at(event)}: an injection turn has a step`)
        const expected = turn.steps.length + 1
        if (event.data.turn !== turn.turn || event.data.step !== expected) {
          problems.push(`${at(event)} ${event.data.turn}.${event.data.step}, expected ${turn.turn}.${expected}`)
        }
        step = { step: event.data.step, startSeq: event.seq, anchor: undefined, chunkSeqs: [], toolCalls: [], toolResults: [] }
        turn.steps.push(step)
        break
      }
      case 'step/end': {
        const current = requireStep(event)
        if (!current) break
        if (event.data.step !== current.step) problems.push(`${at(event)} ${event.data.step} does not close step ${current.step}`)
        closeStep(event, current)
        turn?.stepEnds.set(current.step, event.seq)
        step = undefined
        break
      }
      case 'assistant/chunk': {
        const current = requireStep(event)
        if (current?.anchor) problems.push(`${at(event)} after the step's assistant/message`)
        current?.chunkSeqs.push(event.seq)
        break
      }
      case 'assistant/message': {
        const current = requireStep(event)
        if (!current) break
        if (current.anchor) problems.push(`${at(event)}: a second assistant/message in step ${turn?.turn}.${current.step}`)
        current.anchor = event
        if (!isDeepStrictEqual([...event.data.chunkSeqs], current.chunkSeqs)) {
          problems.push(`${at(event)}: chunkSeqs ${JSON.stringify(event.data.chunkSeqs)} ≠ the step's chunks ${JSON.stringify(current.chunkSeqs)}`)
        }
        break
      }
      case 'tool/call': {
        const current = requireStep(event)
        if (current && !current.anchor) problems.push(`${at(event)} before the step's assistant/message`)
        current?.toolCalls.push(event)
        break
      }
      case 'tool/result': {
        const current = requireStep(event)
        if (current && !current.anchor) problems.push(`${at(event)} before the step's assistant/message`)
        current?.toolResults.push(event)
        break
      }
      case 'request/header':
        requireStep(event)
        break
      case 'user/message':
      case 'steering/message':
        if (!turn) problems.push(`${at(event)} outside a turn`)
        if (turn?.trigger === 'injection' && event.type !== 'user/message') problems.push(`${at(event)} in an injection turn`)
        break
    }
  }
  if (turn) problems.push(`turn ${turn.turn} is still open at quiescence`)
  return turns
}

/**
 * Each turn ends with the right reason: `aborted` when a cancel or dispose
 * reached it while it was open; otherwise `error` (with the failure's code)
 * when its last model call failed beyond the retry budget; otherwise
 * `completed`. Injection turns are `completed`. Only aborted turns may hold
 * interrupted anchors and synthetic results; every other tool result is the
 * one its tool's behaviour gives.
 */
function checkTurnEnds(world: World, turns: readonly TurnSummary[], problems: string[]): void {
  const toolKinds = callKinds(world)
  let errors = 0
  for (const turn of turns) {
    const reason = turn.end?.data.reason
    if (!reason) continue
    const aborted = world.aborts.some((abort) => abort.turn === turn.turn)
    const calls = world.calls.filter((call) => call.turn === turn.turn)
    let expected = 'completed'
    if (turn.trigger !== 'injection' && aborted) expected = 'aborted'
    // A listener's failure ends its turn there: PLUGIN_ERROR, whatever the model calls before it did (R-ERR-1).
    else if (turn.trigger !== 'injection' && faulted(world, turn.turn)) {
      expected = world.faulted.some((fault) => fault.turn === turn.turn && fault.how === 'malformed') ? 'error INVALID_DECISION' : 'error PLUGIN_ERROR'
    }
    else if (turn.trigger !== 'injection') {
      // Consecutive provider failures up to the retry budget are retried in a new step; the
      // next one ends the turn with its failure, and must be the turn's last call.
      let streak = 0
      calls.forEach((call, i) => {
        const code = failureCode(call.reply)
        streak = code === undefined ? 0 : streak + 1
        if (code === undefined || streak <= world.retries) return
        expected = `error ${code}`
        if (i !== calls.length - 1) problems.push(`turn ${turn.turn} made model calls after its retries were exhausted (calls ${calls.map((c) => c.index).join(', ')})`)
      })
      if (streak > 0 && streak <= world.retries) problems.push(`turn ${turn.turn}'s last model call failed and was to be retried, but no call followed`)
    }
    const actual = reason.kind === 'error' ? `error ${reason.failure.code}` : reason.kind
    // A terminal stop stays authoritative through its turn's close (R-LOOP-4): a cancel after the decision does not
    // change the end, one before it prevents the decision; only dispose wins over it.
    const terminal = world.stopped.some((stop) => stop.turn === turn.turn && stop.terminal)
    const disposed = world.aborts.some((abort) => abort.turn === turn.turn && abort.by === 'dispose')
    if (terminal && !disposed && expected === 'aborted') expected = 'aborted or stopped'
    else if (terminal && !disposed && expected === 'completed') expected = 'stopped'
    if (reason.kind === 'stopped' && reason.by !== 'budget') problems.push(`turn ${turn.turn} stopped by ${reason.by}, but only the world's terminal stop (budget) stops turns`)
    if (!expected.split(' or ').includes(actual)) problems.push(`turn ${turn.turn} ended ${actual}, expected ${expected}`)
    if (reason.kind === 'error') errors++

    for (const step of turn.steps) {
      if (step.anchor?.data.interrupted && !aborted) problems.push(`turn ${turn.turn}.${step.step} has an interrupted anchor but nothing cancelled it`)
      for (const result of step.toolResults) {
        const callId = resultCallId(result)
        const kind = toolKinds.get(callId)
        const code = result.data.error?.code
        const allowed = new Set([toolResultCode(kind ?? 'ok')])
        if (aborted) {
          allowed.add('ABORTED').add('ABORTED_BEFORE_DISPATCH')
        }
        if (!allowed.has(code)) problems.push(`turn ${turn.turn}.${step.step}: ${kind} call ${callId} got result code ${code ?? 'none'}`)
        if (code === 'ABORTED_BEFORE_DISPATCH' && resultText(result) !== ABORTED_BEFORE_DISPATCH_TEXT) {
          problems.push(`turn ${turn.turn}.${step.step}: the synthetic result of ${callId} reads ${JSON.stringify(resultText(result))}`)
        }
      }
    }
  }
  const notified = world.agentEvents.filter((record) => record.name === 'agent/error').length
  if (notified !== errors) problems.push(`${errors} turns ended with an error but agent/error was emitted ${notified} times`)
  const effective = world.aborts.filter((abort) => abort.by === 'cancel' && abort.effective && (abort.cause === 'user' || abort.cause === 'parent')).length
  const requested = world.agentEvents.filter((record) => record.name === 'agent/cancel-requested').length
  if (requested !== effective) problems.push(`${effective} effective user/parent cancels but agent/cancel-requested was emitted ${requested} times`)
}

/**
 * The durable inbox: every transition is logged and announced in the same
 * order; every enqueued id gets at most one dequeue or discard; what the log
 * says is pending is exactly `agent.inbox`; after dispose nothing is pending;
 * at idle only parked `queue()` items are.
 */
function checkInbox(world: World, events: readonly AnySessionEvent[], turns: readonly TurnSummary[], quiescence: Quiescence, problems: string[]): void {
  const ids = (messages: readonly AgentMessage[]) => messages.map((message) => message.id)
  const claims = new Set(turns.flatMap((turn) => (turn.trigger === 'prompt' ? [claimSeq(events, turn)] : [])))
  const logged: InboxNotice[] = []
  const turnColumn: AgentMessage[] = []
  const stepColumn: AgentMessage[] = []
  const settled = new Map<MessageId, string>()
  const enqueued = new Set<MessageId>()
  const take = (id: MessageId, how: string, seq: number): AgentMessage | undefined => {
    if (!enqueued.has(id)) problems.push(`#${seq} ${how} of ${id}, which was never enqueued`)
    const previous = settled.get(id)
    if (previous) problems.push(`#${seq} ${how} of ${id}, already ${previous}`)
    settled.set(id, `${how} at #${seq}`)
    for (const column of [turnColumn, stepColumn]) {
      const index = column.findIndex((message) => message.id === id)
      if (index >= 0) return column.splice(index, 1)[0]
    }
    return undefined
  }
  for (const event of events) {
    switch (event.type) {
      case 'inbox/enqueue': {
        const message = event.data.message
        logged.push(['enqueue', message.id])
        if (enqueued.has(message.id)) problems.push(`#${event.seq} enqueues ${message.id} a second time`)
        enqueued.add(message.id)
        ;(message.target === 'next-turn' ? turnColumn : stepColumn).push(message)
        break
      }
      case 'inbox/dequeue':
        // Pending steering is served before the next ordinary item (R-LOOP-1): no prompt is claimed while steering waits.
        if (claims.has(event.seq) && stepColumn.length > 0) {
          problems.push(`#${event.seq} claims a prompt while steering ${JSON.stringify(ids(stepColumn))} is pending`)
        }
        logged.push(['dequeue', event.data.id])
        take(event.data.id, 'dequeue', event.seq)
        break
      case 'inbox/discard':
        logged.push(['discard', [...event.data.ids]])
        for (const id of event.data.ids) take(id, 'discard', event.seq)
        break
      case 'inbox/requeue': {
        const index = stepColumn.findIndex((message) => message.id === event.data.id)
        if (index < 0) {
          problems.push(`#${event.seq} requeues ${event.data.id}, which is not pending steering`)
          break
        }
        const [message] = stepColumn.splice(index, 1)
        turnColumn.push({ ...message!, target: 'next-turn', wakeup: true })
        break
      }
    }
  }
  if (!isDeepStrictEqual(logged, world.inboxNotices.map((notice) => [...notice]))) {
    problems.push(`the agent/inbox/* notifications do not match the log:\n  log:           ${JSON.stringify(logged)}\n  notifications: ${JSON.stringify(world.inboxNotices)}`)
  }
  const inbox = world.agent.inbox
  if (!isDeepStrictEqual(ids(inbox.nextTurn), ids(turnColumn)) || !isDeepStrictEqual(ids(inbox.nextStep), ids(stepColumn))) {
    problems.push(
      `agent.inbox differs from the log: inbox ${JSON.stringify({ nextTurn: ids(inbox.nextTurn), nextStep: ids(inbox.nextStep) })}, ` +
        `log ${JSON.stringify({ nextTurn: ids(turnColumn), nextStep: ids(stepColumn) })}`,
    )
  }
  if (quiescence === 'disposed' && (turnColumn.length > 0 || stepColumn.length > 0)) {
    problems.push(`items are still pending after dispose: ${JSON.stringify([...ids(turnColumn), ...ids(stepColumn)])}`)
  }
  if (quiescence === 'idle') {
    if (stepColumn.length > 0) problems.push(`steering is still pending at idle: ${JSON.stringify(ids(stepColumn))}`)
    const woken = turnColumn.filter((message) => message.wakeup)
    if (woken.length > 0) problems.push(`woken items are still pending at idle: ${JSON.stringify(ids(woken))}`)
  }
}

/**
 * Every id an admission call returned is logged as a message, discarded, or
 * pending; or, for an ordinary item (leftover steering requeued to the
 * ordinary FIFO included), dropped with the turn that claimed it
 * when a cancel or dispose ended that turn before its first step entered it
 * (the seeds let cancel and dispose drop the claimed item with its contexts).
 * Injections are logged exactly once; no message id is logged twice.
 */
function checkAdmissions(world: World, events: readonly AnySessionEvent[], turns: readonly TurnSummary[], problems: string[]): void {
  const loggedAt = new Map<string, number>()
  const dequeuedAt = new Map<string, number>()
  const discarded = new Set<string>()
  const enqueued = new Set<string>()
  for (const event of events) {
    if (event.type === 'user/message' || event.type === 'steering/message') {
      const id = event.data.message.id
      if (loggedAt.has(id)) problems.push(`#${event.seq} logs message ${id} a second time (first at #${loggedAt.get(id)})`)
      else loggedAt.set(id, event.seq)
    } else if (event.type === 'inbox/dequeue') dequeuedAt.set(event.data.id, event.seq)
    else if (event.type === 'inbox/discard') for (const id of event.data.ids) discarded.add(id)
    else if (event.type === 'inbox/enqueue') enqueued.add(event.data.message.id)
  }
  const pending = new Set([...world.agent.inbox.nextTurn, ...world.agent.inbox.nextStep].map((message) => message.id))
  const admitted = new Set(world.admissions.map((admission) => admission.id))
  for (const id of enqueued) if (!admitted.has(id as MessageId)) problems.push(`${id} was enqueued but no admission call returned it`)
  for (const admission of world.admissions) {
    const { id, kind } = admission
    if (kind === 'inject') {
      if (!loggedAt.has(id)) problems.push(`inject() returned ${id} but no user/message carries it`)
      if (enqueued.has(id)) problems.push(`inject() ${id} went through the inbox`)
      continue
    }
    if (!enqueued.has(id)) problems.push(`${kind}() returned ${id} but it was never enqueued`)
    const logged = loggedAt.get(id)
    const dequeued = dequeuedAt.get(id)
    if (logged !== undefined) {
      if (discarded.has(id)) problems.push(`${kind}() ${id} was discarded, yet logged as a message at #${logged}`)
      else if (dequeued === undefined || dequeued > logged) problems.push(`${kind}() ${id} was logged at #${logged} before it was claimed`)
      continue
    }
    if (discarded.has(id) || pending.has(id)) continue
    if (dequeued === undefined) {
      problems.push(`${kind}() ${id} is neither logged, discarded nor pending`)
      continue
    }
    const claimer = turns.find((turn) => turn.startSeq > dequeued)
    // The claim of a turn's ordinary item (a followup, a queue, or leftover steering requeued to the
    // ordinary FIFO): the turn opens right after it (only admissions re-entering from listeners in between).
    const droppedWithTurn =
      claimer !== undefined &&
      claimer.trigger === 'prompt' &&
      claimOf(events, claimer) === id &&
      claimer.steps.length === 0 &&
      (claimer.end?.data.reason.kind === 'aborted' || (claimer.end?.data.reason.kind === 'error' && faulted(world, claimer.turn)))
    if (!droppedWithTurn) problems.push(`${kind}() ${id} was claimed at #${dequeued} but never logged as a message`)
  }
}

/**
 * Where and how admitted input lands (R-IN-3, R-IN-5, R-IN-7, R-LOOP-1):
 * - the request message has the input's id, text and source; with a
 *   `separate` context, the message right before it holds the context (source
 *   `plugin: context`); with `prompt-prefix`, one message holds the context,
 *   the separator line and the request, and its envelope keeps the display
 *   text and the context label;
 * - followup/queue land as `user/message`, steering as `steering/message`
 *   (or as a `user/message` prompt once requeued to the ordinary FIFO);
 * - an injection with no open turn is a one-shot injection turn written on
 *   the spot; between steps it is appended on the spot; inside a step it is
 *   deferred to after that step's last tool result, before `step/end`;
 * - a prompt turn's first step enters its claimed item first; a steering
 *   turn's first step enters steering first.
 */
function checkPlacement(world: World, events: readonly AnySessionEvent[], turns: readonly TurnSummary[], problems: string[]): void {
  const logged = new Map<string, number>()
  const requeued = new Set<string>()
  for (const event of events) {
    if (event.type === 'user/message' || event.type === 'steering/message') logged.set(event.data.message.id, event.seq)
    else if (event.type === 'inbox/requeue') requeued.add(event.data.id)
  }
  const texts = (content: readonly ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
  for (const admission of world.admissions) {
    const at = logged.get(admission.id)
    if (at === undefined) continue
    const event = events[at] as SessionEvent<'user/message'> | SessionEvent<'steering/message'>
    const what = `${admission.kind}(${admission.shape}) ${JSON.stringify(admission.text)} at #${at}`
    const type = admission.kind === 'steer' && !requeued.has(admission.id) ? 'steering/message' : 'user/message'
    if (event.type !== type) problems.push(`${what} is a ${event.type}, expected ${type}`)
    if (!isDeepStrictEqual(event.data.message.source, { kind: 'user' })) problems.push(`${what} has source ${JSON.stringify(event.data.message.source)}`)
    const prefix = admission.shape === 'prefix'
    const content = prefix ? [contextText(admission.text), '## My request:', admission.text] : [admission.text]
    if (!isDeepStrictEqual(texts(event.data.message.content), content)) problems.push(`${what} has content ${JSON.stringify(texts(event.data.message.content))}`)
    const envelope = prefix ? { display: [{ type: 'text', text: admission.text }], contexts: [{ label: contextLabel(admission.text) }] } : undefined
    if (!isDeepStrictEqual(event.data.envelope, envelope)) problems.push(`${what} has envelope ${JSON.stringify(event.data.envelope)}`)
    if (admission.shape === 'separate') {
      // Immediately before it in the history: log-only inbox events (admissions from listeners) may sit between.
      let back = at - 1
      while (back > 0 && events[back]!.type.startsWith('inbox/')) back--
      const before = events[back]
      const context = before?.type === event.type ? (before as typeof event).data.message : undefined
      if (!context || !isDeepStrictEqual(texts(context.content), [contextText(admission.text)]) || !isDeepStrictEqual(context.source, { kind: 'plugin', plugin: 'context' })) {
        problems.push(`${what}: the message right before it is not its separate context`)
      }
    }
    if (admission.kind !== 'inject') continue
    const turn = turns.find((candidate) => candidate.turn === admission.turn)
    switch (admission.where) {
      case 'idle': {
        // A one-shot injection turn opened on the spot (listeners of its turn/start may log inbox events first).
        const start = events[admission.logLength]
        const own = turns.find((candidate) => candidate.startSeq === admission.logLength)
        if (start?.type !== 'turn/start' || own?.trigger !== 'injection' || !own.end || at > own.end.seq) {
          problems.push(`${what}: injected with no open turn, but not in a one-shot injection turn opened at #${admission.logLength}`)
        }
        break
      }
      case 'held': {
        // Injected while maintenance ran: held, then written in a one-shot injection turn once the task settled.
        const own = turns.find((candidate) => candidate.trigger === 'injection' && candidate.startSeq >= admission.logLength && candidate.startSeq < at)
        if (!own?.end || at > own.end.seq) problems.push(`${what}: injected while maintenance ran, but not written in a later one-shot injection turn`)
        break
      }
      case 'one-shot':
        // Injected while a one-shot injection turn was being written: it joins that turn.
        if (!turn?.end || at < turn.startSeq || at > turn.end.seq) problems.push(`${what}: injected inside one-shot turn ${admission.turn}, but not logged in it`)
        break
      case 'opening': {
        // Injected while the turn's claim was published: it waits for turn/start and lands before the first step.
        const firstStep = turn?.steps[0]?.startSeq ?? turn?.end?.seq ?? Infinity
        if (!turn || at < turn.startSeq || at > firstStep) problems.push(`${what}: injected while turn ${admission.turn} was opening, but not logged before its first step`)
        break
      }
      case 'between-steps':
        if (at !== admission.logLength) problems.push(`${what}: injected between steps at #${admission.logLength}, but not appended on the spot`)
        break
      case 'in-step': {
        const step = turn?.steps.find((candidate) => candidate.step === admission.step)
        const end = admission.step === undefined ? undefined : turn?.stepEnds.get(admission.step)
        const lastResult = step?.toolResults.at(-1)?.seq ?? -1
        if (at < admission.logLength || end === undefined || at > end || at < lastResult) {
          problems.push(`${what}: injected inside step ${admission.turn}.${admission.step}, but not after its last tool result (#${lastResult}) and before its step/end (#${end})`)
        }
        break
      }
    }
  }
  for (const turn of turns) {
    const first = turn.steps[0]
    // A cancel may discard a steering turn's proposal while its first step opens: nothing is entered then.
    if (!first || turn.trigger === 'injection' || turn.end?.data.reason.kind === 'aborted') continue
    const entered = events.slice(first.startSeq + 1).find((event) => !event.type.startsWith('inbox/'))
    const expected = turn.trigger === 'steering' ? 'steering/message' : 'user/message'
    if (entered?.type !== expected) problems.push(`step ${turn.turn}.1 of a ${turn.trigger} turn enters ${entered?.type} first, expected ${expected}`)
    if (turn.trigger === 'prompt') {
      const claim = claimOf(events, turn)
      const claimed = claim === undefined ? undefined : logged.get(claim)
      if (claimed === undefined || claimed < first.startSeq || (first.anchor && claimed > first.anchor.seq)) {
        problems.push(`turn ${turn.turn}'s claimed item is not entered by its first step`)
      }
    }
  }
}

/**
 * The derived history equals the log's projection and is a valid provider
 * request: no assistant message without content, every tool call's result
 * right after it, no result without its call.
 */
function checkHistory(world: World, events: readonly AnySessionEvent[], problems: string[]): void {
  const derived = world.session.deriveMessages()
  const projected = project(events, events.length)
  if (!isDeepStrictEqual([...derived], projected)) problems.push('session.deriveMessages() differs from the projection of the log')
  for (const problem of requestProblems(derived)) problems.push(`derived history: ${problem}`)
}

/**
 * Every request the model received is what the log says it was sent: the
 * messages are the projection of the log up to the call, and the system
 * text, tools, provider, model and effort are those of the last
 * `request/header`. Each call belongs to one step, and each step that streamed
 * chunks made exactly one call.
 */
function checkRequests(world: World, events: readonly AnySessionEvent[], turns: readonly TurnSummary[], problems: string[]): void {
  const requests = world.model.requests
  if (requests.length !== world.calls.length) problems.push(`the model recorded ${requests.length} requests for ${world.calls.length} calls`)
  const steps = new Set<string>()
  for (const call of world.calls) {
    const where = `model call #${call.index} (step ${call.turn}.${call.step}, log length ${call.logLength})`
    if (call.turn === undefined) {
      problems.push(`${where} was made with no step open`)
      continue
    }
    const key = `${call.turn}.${call.step}`
    if (steps.has(key)) problems.push(`${where}: a second model call in one step`)
    steps.add(key)
    const request = requests[call.index]
    if (!request) continue
    const expected = project(events, call.logLength)
    if (!isDeepStrictEqual([...request.messages], expected)) {
      problems.push(`${where}: the request's messages differ from the log's projection\n  sent:   ${JSON.stringify(summary(request.messages))}\n  logged: ${JSON.stringify(summary(expected))}`)
    }
    for (const problem of requestProblems(request.messages)) problems.push(`${where}: ${problem}`)
    const header = lastHeader(events, call.logLength)
    if (!header) {
      problems.push(`${where}: no request/header precedes it`)
      continue
    }
    const sent = { provider: request.provider, model: request.model, reasoningEffort: request.reasoningEffort, system: request.system, tools: request.tools }
    const folded = { provider: header.provider, model: header.model, reasoningEffort: header.reasoningEffort, system: header.system, tools: header.tools }
    if (!isDeepStrictEqual(sent, folded)) problems.push(`${where}: the request differs from the last request/header`)
  }
  for (const turn of turns) {
    for (const step of turn.steps) {
      if (step.chunkSeqs.length > 0 && !steps.has(`${turn.turn}.${step.step}`)) problems.push(`step ${turn.turn}.${step.step} logged chunks but made no model call`)
    }
  }
  // Headers are written only on a change: the first is `initial`, each later one differs from the one before.
  const headers = events.filter((event): event is SessionEvent<'request/header'> => event.type === 'request/header')
  headers.forEach((header, i) => {
    const reason = i === 0 ? 'initial' : 'change'
    if (header.data.reason !== reason) problems.push(`#${header.seq} request/header has reason ${header.data.reason}, expected ${reason}`)
    const previous = headers[i - 1]?.data
    const { reason: _a, ...current } = header.data
    if (previous) {
      const { reason: _b, ...before } = previous
      if (isDeepStrictEqual(current, before)) problems.push(`#${header.seq} request/header repeats the previous header`)
    }
  })
}

/**
 * The durability checkpoint (R-IN-4, R-LOOP-5): every `turn/end` is followed
 * by a flush (listeners of `turn/end` may append before it starts: a
 * one-shot injection, say); the next prompt or steering turn opens only after
 * a flush started after the previous prompt or steering turn's `turn/end`
 * has settled (a one-shot injection turn's flush is not waited for: it only
 * makes the injection durable); and nothing is still flushing at quiescence.
 */
function checkFlushes(world: World, turns: readonly TurnSummary[], problems: string[]): void {
  for (const flush of world.flushes) if (flush.end === undefined) problems.push(`the flush started at log length ${flush.at} had not settled at quiescence`)
  const driven = turns.filter((turn) => turn.trigger !== 'injection')
  for (const turn of turns) {
    const end = turn.end
    if (!end) continue
    const after = world.flushes.filter((record) => record.at > end.seq)
    if (after.length === 0) {
      problems.push(`#${end.seq} turn/end ${turn.turn} was not followed by a checkpoint flush`)
      continue
    }
    if (turn.trigger === 'injection') continue
    const next = driven.find((candidate) => candidate.startSeq > end.seq)
    if (next && !after.some((record) => record.end !== undefined && record.end <= next.startSeq)) {
      problems.push(`#${next.startSeq} turn/start ${next.turn} opened before turn ${turn.turn}'s checkpoint flush settled`)
    }
  }
}

/**
 * Durability before the request (durability `'step'`, contracts §2): when a
 * model call is dispatched, a flush that started after every model-visible
 * event and the `request/header` it derives from has settled. (Log-only
 * events such as an `inbox/enqueue` of steering that arrived during that
 * flush may come after.)
 */
function checkDurableRequests(world: World, events: readonly AnySessionEvent[], problems: string[]): void {
  for (const call of world.calls) {
    let last = -1
    for (let seq = call.logLength - 1; seq >= 0; seq--) {
      const type = events[seq]?.type
      if (type === undefined || type.startsWith('inbox/') || type === 'assistant/chunk') continue
      last = seq
      break
    }
    if (last >= call.durableLength) {
      problems.push(`model call #${call.index} left while #${last} ${events[last]!.type} was not durable yet (flushed up to ${call.durableLength})`)
    }
  }
}

/** `agent/status` flips on transitions only, starting `running`, and the agent is idle at quiescence. */
function checkStatus(world: World, problems: string[]): void {
  world.statuses.forEach((status, i) => {
    const expected = i % 2 === 0 ? 'running' : 'idle'
    if (status !== expected) problems.push(`agent/status #${i} is ${status}, expected ${expected} (statuses ${world.statuses.join(' ')})`)
  })
  if (world.agent.status !== 'idle') problems.push(`the agent is ${world.agent.status} at quiescence`)
}

// ── helpers ─────────────────────────────────────────────────────────────

/** The messages the log's first `length` events project to (R-SES-3, no projectors registered). */
export function project(events: readonly AnySessionEvent[], length: number): Message[] {
  const messages: Message[] = []
  for (let i = 0; i < length; i++) {
    const event = events[i]!
    switch (event.type) {
      case 'user/message':
      case 'steering/message':
      case 'tool/result':
        messages.push(event.data.message)
        break
      case 'assistant/message':
        if (event.data.message.content.length > 0) messages.push(event.data.message)
        break
    }
  }
  return messages
}

/**
 * The id a prompt turn claimed: the `inbox/dequeue` right before its
 * `turn/start`, skipping what listeners of the claim did meanwhile (enqueues,
 * and the discard of a cancel that applies to the opening turn).
 */
function claimOf(events: readonly AnySessionEvent[], turn: TurnSummary): string | undefined {
  const seq = claimSeq(events, turn)
  const event = seq === undefined ? undefined : events[seq]
  return event?.type === 'inbox/dequeue' ? event.data.id : undefined
}

function claimSeq(events: readonly AnySessionEvent[], turn: TurnSummary): number | undefined {
  for (let i = turn.startSeq - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'inbox/dequeue') return i
    if (event.type !== 'inbox/enqueue' && event.type !== 'inbox/discard') return undefined
  }
  return undefined
}

/** Why `messages` would not be a valid provider request (empty when it is). */
export function requestProblems(messages: readonly Message[]): string[] {
  const problems: string[] = []
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role === 'assistant') {
      if (message.content.length === 0) problems.push(`message ${i} is an assistant message with no content`)
      const calls = toolCallIds(message.content)
      calls.forEach((id, j) => {
        const result = messages[i + 1 + j]
        const resultId = result ? singleResultId(result) : undefined
        if (resultId !== id) problems.push(`message ${i}'s tool call ${id} is not answered by message ${i + 1 + j}`)
      })
      i += calls.length
      continue
    }
    if (message.content.some((block) => block.type === 'tool-result')) problems.push(`message ${i} is a tool result without its call right before it`)
  }
  return problems
}

function toolCallIds(content: readonly ContentBlock[]): string[] {
  return content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : []))
}

function singleResultId(message: Message): string | undefined {
  const [block, ...rest] = message.content
  return message.role === 'user' && rest.length === 0 && block?.type === 'tool-result' ? block.toolCallId : undefined
}

function resultCallId(result: SessionEvent<'tool/result'>): string | undefined {
  return singleResultId(result.data.message)
}

function resultText(result: SessionEvent<'tool/result'>): string {
  const block = result.data.message.content[0]
  if (block?.type !== 'tool-result') return ''
  return block.content.map((inner) => (inner.type === 'text' ? inner.text : `[${inner.type}]`)).join('')
}

function lastHeader(events: readonly AnySessionEvent[], length: number) {
  for (let i = length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'request/header') return event.data
  }
  return undefined
}

/** Which tool behaviour each call id of the program stands for (ids are `call_<callIndex>_<position>`). */
function callKinds(world: World): Map<string | undefined, ToolKind> {
  const kinds = new Map<string | undefined, ToolKind>()
  for (const call of world.calls) {
    if (call.reply.kind !== 'tools') continue
    call.reply.calls.forEach((kind, position) => kinds.set(`call_${call.index}_${position}`, kind))
  }
  return kinds
}

function summary(messages: readonly Message[]): string[] {
  return messages.map((message) => `${message.role}:${message.id}`)
}

/** One line per event (chunks folded), for failure messages. */
export function describeLog(events: readonly AnySessionEvent[]): string {
  const lines: string[] = []
  let chunks: number[] = []
  const flushChunks = () => {
    if (chunks.length) lines.push(`#${chunks[0]}-${chunks.at(-1)} assistant/chunk ×${chunks.length}`)
    chunks = []
  }
  for (const event of events) {
    if (event.type === 'assistant/chunk') {
      chunks.push(event.seq)
      continue
    }
    flushChunks()
    lines.push(`#${event.seq} ${event.type} ${detail(event)}`.trimEnd())
  }
  flushChunks()
  return lines.join('\n')
}

function detail(event: AnySessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `${event.data.turn} ${event.data.trigger.kind}`
    case 'turn/end': {
      const reason = event.data.reason
      return `${event.data.turn} ${reason.kind}${reason.kind === 'error' ? ` ${reason.failure.code}` : reason.kind === 'stopped' ? ` by ${reason.by}` : ''}`
    }
    case 'step/start':
    case 'step/end':
      return `${event.data.turn}.${event.data.step}`
    case 'user/message':
    case 'steering/message':
      return `${event.data.message.id} ${JSON.stringify(event.data.message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('|'))}`
    case 'assistant/message':
      return `${event.data.finishReason.kind}${event.data.interrupted ? ' interrupted' : ''} [${event.data.message.content.map((block) => (block.type === 'tool-call' ? `call ${block.id} ${block.name}` : block.type)).join(', ')}]`
    case 'tool/call':
      return `${event.data.callId} ${event.data.name}`
    case 'tool/result':
      return `${resultCallId(event)} ${event.data.error?.code ?? 'ok'}`
    case 'inbox/enqueue':
      return `${event.data.message.id} ${event.data.message.target}${event.data.message.wakeup ? '' : ' parked'}`
    case 'inbox/dequeue':
    case 'inbox/requeue':
      return event.data.id
    case 'inbox/discard':
      return event.data.ids.join(',')
    default:
      return ''
  }
}

/** Whether an armed fault fired while turn `turn` was open (or opening): that turn ends `error PLUGIN_ERROR` unless aborted. */
function faulted(world: World, turn: number): boolean {
  return world.faulted.some((fault) => fault.turn === turn)
}

/**
 * Maintenance (`runMaintenance`): at quiescence every call has settled; one
 * that resolved ran its task to the end; one that rejected did so with
 * `DISPOSED`, only once dispose had been called, and its task never started
 * (a running task is aborted by its signal but settles with its own
 * outcome; this world's tasks ignore the signal). Without dispose, every
 * call resolved.
 */
function checkMaintenance(world: World, quiescence: Quiescence, problems: string[]): void {
  for (const record of world.maintenance) {
    const what = `maintenance ${record.n}${record.afterDispose ? ' (requested after dispose())' : ''}${record.ownTurn ? ' (requested by its own turn)' : ''}`
    if (record.outcome === undefined) problems.push(`${what} never settled`)
    else if (record.ownTurn && !record.afterDispose) {
      if (record.outcome !== 'WOULD_DEADLOCK') problems.push(`${what} settled ${record.outcome}, expected WOULD_DEADLOCK`)
    } else if (record.outcome === 'WOULD_DEADLOCK') problems.push(`${what} rejected WOULD_DEADLOCK outside its own turn`)
    else if (record.outcome === 'resolved') {
      if (!record.ended) problems.push(`${what} resolved but its task did not run to its end`)
      if (record.afterDispose) problems.push(`${what} ran although dispose() had been called`)
    } else {
      if (record.outcome !== 'DISPOSED') problems.push(`${what} rejected with ${record.outcome}`)
      if (quiescence !== 'disposed') problems.push(`${what} rejected without dispose()`)
      if (record.started) problems.push(`${what} rejected after its task started`)
    }
  }
}
