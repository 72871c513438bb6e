import type { Scenario } from '../lib/scenario.ts'
import turnOverhead from './turn-overhead.ts'
import toolTurns from './tool-turns.ts'
import growth from './growth.ts'
import streaming from './streaming.ts'
import parallelTools from './parallel-tools.ts'
import resume from './resume.ts'
import prefixStability from './prefix-stability.ts'
import mcpCallOverhead from './mcp-call-overhead.ts'
import compaction from './compaction.ts'
import sessionPostgres from './session-postgres.ts'
import subagentOverhead from './subagent-overhead.ts'

/**
 * Every scenario, in the order of the table (the orchestrator's list; a run's
 * child loads only its own scenario's module, see `child.ts`).
 */
export const scenarios: readonly Scenario<any>[] = [turnOverhead, toolTurns, growth, streaming, parallelTools, resume, prefixStability, mcpCallOverhead, compaction, sessionPostgres, subagentOverhead]
