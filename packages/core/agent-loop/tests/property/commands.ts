import fc from 'fast-check'
import { AgentError, type AgentCancelCause, type AgentInput } from '@deepseek-ai/dsh-agent'
import { tick } from './driver'
import type { AdmissionRecord, MaintenanceRecord, World } from './world'

/** A command of a program: synchronous admissions and cancels, or an asynchronous pause. */
export type ProgramCommand = fc.Command<ProgramModel, World> | fc.AsyncCommand<ProgramModel, World>

/** What the command model tracks: only what decides whether a command may run. */
export interface ProgramModel {
  disposeIssued: boolean
}

type AdmitKind = 'followup' | 'queue' | 'steer'
type Shape = 'plain' | 'separate' | 'prefix'

/** The input of one admission: text, or text with one context placed `separate` or `prompt-prefix`. */
function input(text: string, shape: Shape): AgentInput {
  if (shape === 'plain') return text
  return {
    content: text,
    contexts: [{ label: contextLabel(text), content: [{ type: 'text', text: contextText(text) }] }],
    placement: shape === 'prefix' ? 'prompt-prefix' : 'separate',
  }
}

/** The label and text of the context an input with text `text` carries. */
export const contextLabel = (text: string) => `about ${text}`
export const contextText = (text: string) => `context of ${text}`

/**
 * The driver turn a call made right now applies to: the open turn, or the
 * turn being opened while its claim is being published (R-LOOP-1: claim and
 * open are one step). A one-shot injection turn is not a driver turn.
 *
 * `opening` covers the window in which the loop holds injections for
 * `turn/start`: while the claim (`inbox/dequeue`, with no turn open; other
 * listeners' admissions may follow it) or `turn/start` itself is the newest
 * fact of the log. Injections made then land after `turn/start`, in order,
 * before the first step.
 */
export function driverTurn(world: World): { turn: number; opening: boolean } | undefined {
  const position = world.session.position
  const events = world.session.events
  if (position.openTurn) {
    if (position.openTurn.trigger.kind === 'injection') return undefined
    return { turn: position.openTurn.turn, opening: events.at(-1)?.type === 'turn/start' }
  }
  for (let i = events.length - 1; i > 0; i--) {
    const type = events[i]!.type
    if (type === 'inbox/dequeue') return { turn: position.lastTurn + 1, opening: true }
    if (!type.startsWith('inbox/')) break
  }
  return undefined
}

/** Admits `text` through `kind` and records it with where the loop stood. */
function admitRecorded(world: World, kind: AdmitKind | 'inject', shape: Shape, what: string): void {
  const position = world.session.position
  const driver = driverTurn(world)
  const where: AdmissionRecord['where'] = driver?.opening
    ? 'opening'
    : driver
      ? position.openStep
        ? 'in-step'
        : 'between-steps'
      : position.openTurn
        ? 'one-shot'
        : world.maintenance.some((task) => task.started && !task.ended)
          ? 'held'
          : 'idle'
  const logLength = world.session.events.length
  const text = world.nextLabel(kind[0]!)
  const id = admit(world, what, () => world.agent[kind](input(text, shape)))
  if (id === undefined) return
  world.admissions.push({ kind, id, text, shape, logLength, where, turn: driver?.turn ?? position.openTurn?.turn, step: position.openStep?.step })
}

/**
 * Runs one admission call: it must succeed until dispose starts, then throw
 * `DISPOSED` without touching the log. Returns the id, or undefined when it threw.
 */
function admit(world: World, what: string, call: () => ReturnType<World['agent']['followup']>): ReturnType<World['agent']['followup']> | undefined {
  const before = world.session.events.length
  const disposing = world.disposeStarted
  try {
    const id = call()
    if (disposing) world.violations.push(`${what} was admitted after dispose() started`)
    return id
  } catch (error) {
    const code = error instanceof AgentError ? error.code : undefined
    if (!disposing || code !== 'DISPOSED') world.violations.push(`${what} threw ${String(error)} (code ${code})`)
    if (world.session.events.length !== before) world.violations.push(`${what} threw but appended to the log`)
    return undefined
  }
}

/** `followup` / `queue` / `steer`, with or without a context. */
class Admit implements fc.Command<ProgramModel, World> {
  constructor(
    readonly kind: AdmitKind,
    readonly shape: Shape,
  ) {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    admitRecorded(world, this.kind, this.shape, String(this))
  }
  toString(): string {
    return `${this.kind}(${this.shape})`
  }
}

/** `inject` of plain text: deferred, appended between steps, or a one-shot injection turn. */
class Inject implements fc.Command<ProgramModel, World> {
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    admitRecorded(world, 'inject', 'plain', String(this))
  }
  toString(): string {
    return 'inject()'
  }
}

/** Malformed input: it must throw `INVALID_INPUT` (or `DISPOSED`) and change nothing (R-IN-8). */
class Refused implements fc.Command<ProgramModel, World> {
  constructor(readonly variant: 'inject-with-contexts' | 'blank-followup' | 'bad-placement-steer') {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    const before = world.session.events.length
    const inbox = world.agent.inbox
    const disposing = world.disposeStarted
    try {
      switch (this.variant) {
        case 'inject-with-contexts':
          world.agent.inject({ content: 'x', contexts: [{ label: 'c', content: [{ type: 'text', text: 'c' }] }] })
          break
        case 'blank-followup':
          world.agent.followup('   ')
          break
        case 'bad-placement-steer':
          world.agent.steer({ content: 'x', placement: 'sideways' as 'separate' })
          break
      }
      world.violations.push(`${this} was accepted`)
    } catch (error) {
      const code = error instanceof AgentError ? error.code : undefined
      const expected = disposing ? 'DISPOSED' : 'INVALID_INPUT'
      if (code !== expected) world.violations.push(`${this} threw code ${code}, expected ${expected}`)
    }
    if (world.session.events.length !== before) world.violations.push(`${this} appended to the log`)
    if (world.agent.inbox !== inbox) world.violations.push(`${this} changed the inbox`)
  }
  toString(): string {
    return `refused(${this.variant})`
  }
}

/**
 * `cancel(cause, { keepInbox })`. Checked at once: with no open turn, or on a
 * turn already aborted, it is a no-op; otherwise it discards everything
 * pending unless `keepInbox` (logging only that `inbox/discard`), and the turn
 * is recorded as aborted.
 */
class Cancel implements fc.Command<ProgramModel, World> {
  constructor(
    readonly cause: AgentCancelCause,
    readonly keepInbox: boolean,
  ) {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    // A one-shot injection turn is written synchronously and has nothing to abort: a cancel
    // from inside it (a listener of its events) sees no driver turn and is a no-op.
    const open = driverTurn(world)
    const before = world.session.events.length
    const inbox = world.agent.inbox
    // A cancel made while another cancel of the turn is under way (from a listener of its agent/cancel-requested or
    // agent/inbox/discard) is not the effective one: the turn is being cancelled already.
    const effective = open !== undefined && !world.aborts.some((abort) => abort.turn === open.turn) && !world.cancelling.includes(open.turn)
    const reactionsBefore = world.reactionsRun
    if (open) world.cancelling.push(open.turn)
    try {
      world.agent.cancel(this.cause, { keepInbox: this.keepInbox })
    } finally {
      if (open) world.cancelling.splice(world.cancelling.lastIndexOf(open.turn), 1)
    }
    if (open) world.aborts.push({ by: 'cancel', turn: open.turn, effective, cause: this.cause.kind, keepInbox: this.keepInbox })
    // A reaction armed on the cancel's own notifications (agent/cancel-requested, agent/inbox/discard) ran inside it and
    // may have admitted, cancelled or disposed: what the cancel itself appended is then the global invariants' to judge.
    if (world.reactionsRun !== reactionsBefore) return
    const appended = world.session.events.slice(before).map((event) => event.type)
    if (!effective || this.keepInbox) {
      if (appended.length > 0) world.violations.push(`${this} (${effective ? 'keepInbox' : 'no-op'}) appended ${appended.join(', ')}`)
      if (world.agent.inbox !== inbox) world.violations.push(`${this} (${effective ? 'keepInbox' : 'no-op'}) changed the inbox`)
      return
    }
    const pending = inbox.nextTurn.length + inbox.nextStep.length
    const expected = pending > 0 ? ['inbox/discard'] : []
    if (appended.join() !== expected.join()) world.violations.push(`${this} appended [${appended.join(', ')}], expected [${expected.join(', ')}]`)
    const left = world.agent.inbox
    if (left.nextTurn.length + left.nextStep.length > 0) world.violations.push(`${this} left items pending`)
  }
  toString(): string {
    return `cancel(${this.cause.kind}${this.keepInbox ? ', keepInbox' : ''})`
  }
}

/**
 * Changes what the next request is made with: the reasoning effort an
 * `agent/request` listener sets, or the visible tool set. The loop must log a
 * new `request/header` before the next request (and only then).
 */
class Reconfigure implements fc.Command<ProgramModel, World> {
  constructor(readonly change: 'effort low' | 'effort high' | 'effort default' | 'toggle tool') {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    if (this.change === 'toggle tool') world.toggleExtraTool()
    else world.effort = this.change === 'effort default' ? undefined : this.change === 'effort low' ? 'low' : 'high'
  }
  toString(): string {
    return `reconfigure(${this.change})`
  }
}

/**
 * `runMaintenance(task)`, not awaited: the task checks that no turn is open
 * when it starts and that none opens (nor a one-shot injection turn is
 * written) while it waits its ticks, and that no other task overlaps it.
 * Its promise must resolve with the task's value, or reject `DISPOSED` when
 * dispose came first (a queued task never runs then). Checked at quiescence
 * (`checkMaintenance`).
 */
class Maintain implements fc.Command<ProgramModel, World> {
  constructor(readonly ticks: number) {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    const n = world.maintenance.length + 1
    // Requested by the agent's own turn (a reaction inside its drain while a driver turn is open): it would wait for
    // itself, so it must reject WOULD_DEADLOCK.
    const ownTurn = world.root.agents.initiator() === world.agent && driverTurn(world) !== undefined
    const record: MaintenanceRecord = { n, afterDispose: world.disposeStarted, ownTurn, started: false, ended: false, outcome: undefined }
    world.maintenance.push(record)
    const task = async (): Promise<number> => {
      record.started = true
      if (world.maintenance.some((other) => other !== record && other.started && !other.ended)) world.violations.push(`maintenance ${n} overlaps another task`)
      const open = world.session.position.openTurn
      if (open) world.violations.push(`maintenance ${n} started while turn ${open.turn} is open`)
      const from = world.session.events.length
      for (let i = 1; i <= this.ticks; i++) await tick(world.s, `maintenance ${n} ${i}/${this.ticks}`)
      const opened = world.session.events.slice(from).filter((event) => event.type === 'turn/start')
      if (opened.length) world.violations.push(`maintenance ${n}: ${opened.length} turn(s) opened while it ran`)
      if (world.disposeSettled) world.violations.push(`maintenance ${n} ran on after dispose() resolved`)
      record.ended = true
      return n
    }
    world.agent.runMaintenance(task).then(
      (value) => {
        record.outcome = 'resolved'
        if (value !== n) world.violations.push(`maintenance ${n} resolved with ${String(value)}`)
      },
      (error: unknown) => {
        record.outcome = error instanceof AgentError ? error.code : String(error)
      },
    )
  }
  toString(): string {
    return `maintain(${this.ticks})`
  }
}

/**
 * Arms a one-shot stop: the next `agent/turn-continuation` decides
 * `{ kind: 'stop', by: 'budget', terminal: true }` (the turn ends `stopped`,
 * authoritative through its close and flush: steering pending or admitted
 * meanwhile is discarded) or a natural `{ kind: 'stop', by: 'policy' }`
 * (turn-stopping and the last steering drain follow).
 */
class Stop implements fc.Command<ProgramModel, World> {
  constructor(readonly terminal: boolean) {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    world.stops.push({ terminal: this.terminal })
  }
  toString(): string {
    return `stop(${this.terminal ? 'terminal' : 'natural'})`
  }
}

/** The checkpoints a fault can be armed on. */
const FAULT_CHECKPOINTS = [
  'agent/prompt-submit',
  'agent/pre-step',
  'agent/request',
  'agent/step-result',
  'agent/post-step',
  'agent/request-error',
  'agent/turn-continuation',
  'agent/turn-stopping',
] as const

/**
 * Arms a one-shot fault: the next dispatch of `on` to the world's listener
 * fails, at once (a synchronous throw out of the listener) or after its tick
 * (a rejection, with room for a cancel before it). A plugin's failure ends
 * its turn `error` (`PLUGIN_ERROR`), never the loop (R-ERR-1).
 */
class Fault implements fc.Command<ProgramModel, World> {
  constructor(
    readonly on: (typeof FAULT_CHECKPOINTS)[number],
    readonly how: 'throw' | 'late' | 'malformed',
  ) {}
  check(): boolean {
    return true
  }
  run(_model: ProgramModel, world: World): void {
    world.faults.push({ on: this.on, how: this.how })
  }
  toString(): string {
    return `fault(${this.on}, ${this.how})`
  }
}

const fault = fc.oneof(
  fc.tuple(fc.constantFrom(...FAULT_CHECKPOINTS), fc.constantFrom('throw' as const, 'late' as const)).map(([on, how]) => new Fault(on, how)),
  // A step-result listener's value the log refuses as data: the turn ends INVALID_DECISION, the agent goes on.
  fc.constant(new Fault('agent/step-result', 'malformed')),
)

/** The log events a reaction can be armed on. */
const REACTION_EVENTS = [
  'turn/start',
  'step/start',
  'user/message',
  'steering/message',
  'request/header',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'step/end',
  'turn/end',
  'inbox/enqueue',
  'inbox/dequeue',
  // The agent's notifications: a UI or a policy drives the agent from these as well.
  'agent/status:running',
  'agent/status:idle',
  'agent/inbox/enqueue',
  'agent/inbox/dequeue',
  'agent/inbox/discard',
  'agent/cancel-requested',
  'agent/error',
] as const

/**
 * Arms a one-shot reaction: when the next event of type `on` is published
 * (`session/event`, synchronously inside the append), `action` runs right
 * there, with the same checks as the command it stands for. This is the
 * re-entrant interleaving a plugin creates by driving the agent from a
 * session listener.
 */
class React implements fc.Command<ProgramModel, World> {
  constructor(
    readonly on: (typeof REACTION_EVENTS)[number],
    readonly action: fc.Command<ProgramModel, World>,
  ) {}
  check(): boolean {
    return true
  }
  run(model: ProgramModel, world: World): void {
    world.reactions.push({
      on: this.on,
      action: () => {
        if (this.action.check(model)) this.action.run(model, world)
      },
    })
  }
  toString(): string {
    return `on(${this.on}, ${this.action})`
  }
}

/** `handle.dispose()` at this point of the program (not awaited: the program goes on while it settles). */
export class Dispose implements fc.Command<ProgramModel, World> {
  check(model: Readonly<ProgramModel>): boolean {
    return !model.disposeIssued
  }
  run(model: ProgramModel, world: World): void {
    model.disposeIssued = true
    // Set before the call: its synchronous part (the discard, its notifications) may run reactions that admit.
    world.disposeStarted = true
    const open = driverTurn(world)
    if (open) {
      const effective = !world.aborts.some((abort) => abort.turn === open.turn)
      world.aborts.push({ by: 'dispose', turn: open.turn, effective, cause: 'disposed', keepInbox: false })
    }
    const disposal = world.handle.dispose()
    world.dispose = disposal
    disposal.then(() => {
      world.disposeSettled = true
      world.logLengthAtDispose = world.session.events.length
    })
  }
  toString(): string {
    return 'dispose()'
  }
}

/**
 * Lets the world run for `ticks` scheduler ticks before the next command, so
 * commands spread over streams and tool batches instead of all landing at
 * the start of the first turn.
 */
class Pause implements fc.AsyncCommand<ProgramModel, World> {
  constructor(readonly ticks: number) {}
  check(): boolean {
    return true
  }
  async run(_model: ProgramModel, world: World): Promise<void> {
    for (let i = 1; i <= this.ticks; i++) await tick(world.s, `pause ${i}/${this.ticks}`)
  }
  toString(): string {
    return `pause(${this.ticks})`
  }
}

const shape = fc.constantFrom<Shape>('plain', 'plain', 'separate', 'prefix')
const cause = fc.constantFrom<AgentCancelCause>({ kind: 'user' }, { kind: 'parent' }, { kind: 'hook', reason: 'policy' })

/**
 * Loop bugs still open (see `property/regressions.test.ts`), kept out of the
 * programs so that the properties keep guarding everything else. Each key is
 * a reaction not drawn (`event` or `event action-prefix`).
 * `FC_OPEN_BUGS=<key>[,<key>…]` or
 * `FC_OPEN_BUGS=all` lets them back in; the seeds quoted in the regressions
 * file replay with their key. Remove a key once its regression test passes.
 */
export const OPEN_BUGS: readonly string[] = []

const reopened = new Set((process.env.FC_OPEN_BUGS ?? '').split(',').map((key) => key.trim()))

/** Whether programs avoid the open bug `key`. */
function avoided(key: string): boolean {
  return OPEN_BUGS.includes(key) && !reopened.has(key) && !reopened.has('all')
}

function openBug(reaction: React): boolean {
  return OPEN_BUGS.some((key) => {
    const [on, action] = key.split(' ')
    return avoided(key) && reaction.on === on && (action === undefined || String(reaction.action).startsWith(action))
  })
}

/** Reactions; `withDispose` lets a reaction be `dispose()` (a UI closing the agent from a session listener). */
function reactions(withDispose: boolean): fc.Arbitrary<React> {
  const actions: fc.Arbitrary<fc.Command<ProgramModel, World>>[] = [
    fc.tuple(cause, fc.boolean()).map(([c, keep]): fc.Command<ProgramModel, World> => new Cancel(c, keep)),
    fc.constant(new Inject()),
    shape.map((s) => new Admit('steer', s)),
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('queue', s)),
    fc.integer({ min: 0, max: 2 }).map((ticks) => new Maintain(ticks)),
    fc.constantFrom('inject-with-contexts' as const, 'blank-followup' as const, 'bad-placement-steer' as const).map((v) => new Refused(v)),
  ]
  if (withDispose) actions.push(fc.constant(new Dispose()))
  return fc
    .tuple(fc.constantFrom(...REACTION_EVENTS), fc.oneof(...actions))
    .map(([on, action]) => new React(on, action))
    .filter((candidate) => !openBug(candidate))
}

/** The commands every program draws from; `withDispose` adds `dispose()` at a random point. */
export function commandArbitraries(withDispose: boolean): fc.Arbitrary<ProgramCommand>[] {
  // fc.commands draws each entry with equal probability: repeated entries are the weights.
  const pause = fc.integer({ min: 1, max: 20 }).map((ticks) => new Pause(ticks))
  const commands: fc.Arbitrary<ProgramCommand>[] = [
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('queue', s)),
    shape.map((s) => new Admit('steer', s)),
    shape.map((s) => new Admit('steer', s)),
    fc.constant(new Inject()),
    fc.constant(new Inject()),
    fc.constantFrom('inject-with-contexts' as const, 'blank-followup' as const, 'bad-placement-steer' as const).map((v) => new Refused(v)),
    fc.tuple(cause, fc.boolean()).map(([c, keep]) => new Cancel(c, keep)),
    fc.constantFrom('effort low' as const, 'effort high' as const, 'effort default' as const, 'toggle tool' as const).map((c) => new Reconfigure(c)),
    reactions(withDispose),
    fault,
    fc.integer({ min: 0, max: 4 }).map((ticks) => new Maintain(ticks)),
    fc.boolean().map((terminal) => new Stop(terminal)),
    pause,
    pause,
    pause,
    pause,
  ]
  if (withDispose) commands.push(fc.constant(new Dispose()))
  return commands
}

/**
 * Commands for programs aimed at tool batches: prompts, steering, injections,
 * cancels and reactions between short pauses, so cancels land inside streams
 * of tool calls and inside running batches. (These programs dispose after
 * their last command, or from a reaction, so that dispose too lands in the
 * middle of the work.)
 */
export function batchCommandArbitraries(withDispose: boolean): fc.Arbitrary<ProgramCommand>[] {
  const pause = fc.integer({ min: 1, max: 8 }).map((ticks) => new Pause(ticks))
  const commands: fc.Arbitrary<ProgramCommand>[] = [
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('followup', s)),
    shape.map((s) => new Admit('steer', s)),
    fc.constant(new Inject()),
    fc.tuple(cause, fc.boolean()).map(([c, keep]) => new Cancel(c, keep)),
    fc.tuple(cause, fc.boolean()).map(([c, keep]) => new Cancel(c, keep)),
    reactions(withDispose),
    fault,
    fc.boolean().map((terminal) => new Stop(terminal)),
    pause,
    pause,
    pause,
  ]
  return commands
}
