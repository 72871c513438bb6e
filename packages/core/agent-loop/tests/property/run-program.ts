import fc from 'fast-check'
import { Dispose, batchCommandArbitraries, commandArbitraries, type ProgramCommand, type ProgramModel } from './commands'
import { commandsReplayPath, drainScheduler, settle, tick } from './driver'
import { asHeardProblems } from './as-heard'
import { checkWorld, describeLog } from './invariants'
import { TOOL_KINDS, type Reply, type ToolKind } from './program'
import { buildWorld, type World } from './world'

/** One random program: what the model answers, the loop's pool size, the pace, and the commands. */
export interface Program {
  replies: Reply[]
  maxParallelToolCalls: number
  pace: number
  commands: Iterable<ProgramCommand>
  /** When the commands did not dispose: how many ticks after the last one `dispose()` comes. */
  disposeDelay: number
  /** How many consecutive provider failures of a turn are retried. */
  retries: number
}

const reply: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('text' as const), words: fc.integer({ min: 1, max: 4 }), reasoning: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      text: fc.boolean(),
      calls: fc.array(fc.constantFrom(...TOOL_KINDS), { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'max-tokens' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'error-finish' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'throw' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'no-finish' as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'adapter-throws' as const }, { kind: 'not-iterable' as const }, { kind: 'malformed-chunk' as const }) },
)

/** A tool round of the batch-focused programs: one to four calls of tools that run (no refusals). */
const batchReply: fc.Arbitrary<Reply> = fc.record({
  kind: fc.constant('tools' as const),
  text: fc.boolean(),
  calls: fc.array(fc.constantFrom<ToolKind>('ok', 'slow', 'obedient', 'obedient', 'exclusive', 'fail'), { minLength: 1, maxLength: 4 }),
})

/**
 * Programs. `mixed`: every kind of reply and command. `batches`: every reply
 * is a tool round, and the commands are prompts, steering, injections and
 * cancels between short pauses, so that cancel and dispose land inside tool
 * batches. `withDispose` disposes after the last command and `disposeDelay`
 * more ticks (`mixed` programs may also draw `dispose()` among their commands).
 */
export function programs(focus: 'mixed' | 'batches', withDispose: boolean): fc.Arbitrary<Program> {
  const mixed = focus === 'mixed'
  return fc.record({
    replies: mixed ? fc.array(reply, { maxLength: 8 }) : fc.array(batchReply, { minLength: 1, maxLength: 4 }),
    maxParallelToolCalls: fc.constantFrom(1, 2, 10),
    pace: fc.constantFrom(0, 1, 4, 50),
    commands: fc.commands(mixed ? commandArbitraries(withDispose) : batchCommandArbitraries(withDispose), {
      maxCommands: 16,
      size: 'medium',
      ...(commandsReplayPath === undefined ? {} : { replayPath: commandsReplayPath }),
    }),
    disposeDelay: withDispose ? fc.integer({ min: 0, max: 60 }) : fc.constant(0),
    retries: fc.constantFrom(0, 0, 1, 2),
  })
}

/**
 * Runs `program` in a fresh world under scheduler `s`: the commands run in
 * order, each when the scheduler picks its tick (interleaved with stream
 * chunks, tool bodies and checkpoint listeners), then the world is
 * driven to quiescence (`whenIdle()`, or `dispose()` settling) and every
 * invariant is checked. Throws with the violations and the whole log.
 * `observe` sees the quiescent world first (coverage statistics).
 */
export async function runProgram(s: fc.Scheduler, program: Program, withDispose: boolean, observe?: (world: World) => void): Promise<void> {
  const world = await buildWorld(s, { replies: program.replies, maxParallelToolCalls: program.maxParallelToolCalls, retries: program.retries })
  const model: ProgramModel = { disposeIssued: false }
  try {
    // Each command waits for its own scheduler tick, then runs outside the scheduler's wait (a
    // `scheduleSequence` item may not itself wait on scheduled tasks, and pauses do).
    const sequence = (async () => {
      for (const command of program.commands) {
        await tick(s, String(command))
        if (await command.check(model)) await command.run(model, world)
      }
    })()
    await settle(s, sequence, 'the program', program.pace)
    if (withDispose) {
      if (!model.disposeIssued) {
        const late = (async () => {
          for (let i = 1; i <= program.disposeDelay; i++) await tick(s, `before dispose ${i}/${program.disposeDelay}`)
          new Dispose().run(model, world)
        })()
        await settle(s, late, 'the late dispose()', program.pace)
      }
      await settle(s, world.dispose!, 'dispose()', program.pace)
      await drainScheduler(s)
      observe?.(world)
      fail(world, [...checkWorld(world, 'disposed'), ...asHeardProblems(world)])
    } else {
      await settle(s, world.agent.whenIdle(), 'whenIdle()', program.pace)
      const length = world.session.events.length
      await drainScheduler(s)
      observe?.(world)
      const problems = [...checkWorld(world, 'idle'), ...asHeardProblems(world)]
      if (world.session.events.length !== length) problems.push(`the log grew after whenIdle() resolved (${length} → ${world.session.events.length} events)`)
      fail(world, problems)
    }
  } finally {
    if (!world.dispose) {
      world.dispose = world.handle.dispose()
      await settle(s, world.dispose, 'cleanup dispose()', 50).catch(() => {})
    }
  }
}

function fail(world: World, problems: readonly string[]): void {
  if (problems.length === 0) return
  throw new Error(`${problems.length} invariant violation(s):\n- ${problems.join('\n- ')}\n\nThe log:\n${describeLog(world.session.events)}`)
}
