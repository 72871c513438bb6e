import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compactionLine, skippedLine } from '../src/cli/compaction-lines'
import { onlySession, runDemo, startDemo, tempDir, trace, workspace } from './helpers'

/** A prompt of about 1,800 characters (the offline model quotes only its start). */
const note = (i: number) => `note ${i}: ${'zz '.repeat(600)}\n`

/** The offline model with a 6,000-token window and a 200-token output limit: the limit is 80% of 5,800. */
const SMALL_WINDOW = JSON.stringify({ scripted: { models: [{ id: 'demo', contextWindow: 6_000, maxOutputTokens: 200 }] } })

describe('dsh-demo compaction', { timeout: 240_000 }, () => {
  it('shows the share of the window after each turn, compacts on /compact [instructions] and under pressure, and says so', async () => {
    const cwd = workspace()
    const data = tempDir()
    writeFileSync(join(cwd, 'dsh.config.json'), SMALL_WINDOW)
    const demo = startDemo(['--data-dir', data], { cwd })
    await demo.waitFor(/^> /m)
    demo.write('/compact\n')
    await demo.waitFor(/^> /m, 2)
    let prompts = 2
    for (let i = 1; i <= 4; i++) {
      demo.write(note(i))
      await demo.waitFor(/^> /m, ++prompts)
    }
    demo.write('/compact keep the numbers\n')
    await demo.waitFor(/^> /m, ++prompts)
    for (let i = 5; i <= 10; i++) {
      demo.write(note(i))
      await demo.waitFor(/^> /m, ++prompts)
    }
    demo.end()
    expect(await demo.exited).toBe(0)

    const lines = demo.stdout().split('\n')
    // The greeting names the command (the whole line is cli-interactive's to check).
    expect(lines.find((line) => line.startsWith('Commands: '))).toContain(' · /compact [instructions] · ')
    // Nothing to compact in a new session: said, nothing written.
    expect(lines).toContain('· nothing to compact: the history is empty')
    // Every turn's summary line ends with the share of the window the next request would use.
    const summaries = lines.filter((line) => line.startsWith('· turn '))
    expect(summaries).toHaveLength(10)
    for (const line of summaries) expect(line).toMatch(/^· turn \d+ done · .* · context \d+% of 6,000$/)
    const compacted = lines.filter((line) => line.startsWith('· compacted'))
    expect(compacted).toEqual([
      expect.stringMatching(/^· compacted \(manual\): summarized the older history, about [\d,]+ → [\d,]+ tokens · requested by compact\(\) with instructions$/),
      expect.stringMatching(
        /^· compacted \(pressure\): summarized the older history, about [\d,]+ → [\d,]+ tokens · before turn \d+ step 1 with the 1 proposed message the next request is estimated at [\d,]+ tokens, over the limit of 4,640 \(80% of the usable window: 6,000 − 200 reserved for the answer\)$/,
      ),
    ])
    for (const line of compacted) {
      const [before, after] = /about ([\d,]+) → ([\d,]+)/.exec(line)!.slice(1).map((n) => Number(n.replaceAll(',', '')))
      expect(after!).toBeLessThan(before!)
    }

    // The log says what ran and why, and the session goes on after each.
    const { events } = onlySession(data)
    expect(trace(events).filter((line) => line.startsWith('compaction/') || line === 'turn/end 4 completed' || line === 'turn/end 10 completed')).toEqual([
      'turn/end 4 completed',
      'compaction/start',
      'compaction/summary',
      'compaction/start',
      'compaction/summary',
      'turn/end 10 completed',
    ])
    const starts = events.filter((event) => event.type === 'compaction/start').map((event) => event.data as { reason: string; instructions?: string })
    expect(starts).toMatchObject([{ reason: 'manual', instructions: 'keep the numbers' }, { reason: 'pressure' }])
  })

  it('-p ends its summary line with the share of the window', async () => {
    const cwd = workspace()
    const data = tempDir()
    writeFileSync(join(cwd, 'dsh.config.json'), SMALL_WINDOW)
    const { status, stderr } = await runDemo(['-p', 'hello', '--data-dir', data], { cwd })
    expect(status).toBe(0)
    expect(stderr.split('\n').filter((line) => line.startsWith('· turn '))).toEqual([expect.stringMatching(/^· turn 1 done · .* · context \d+% of 6,000$/)])
  })

  it('a summary that came out no smaller is said once, as not compacted; a skip that logged nothing is said by /compact', () => {
    const start = { reason: 'manual' as const, from: 1, to: 9, estimatedTokens: 900, why: 'requested by compact()' }
    const message = 'nothing to gain: the summary (about 480 tokens with what it keeps verbatim) would not be smaller than the 443 tokens it replaces; nothing was compacted'
    expect(compactionLine(start, 'compaction/failed', { code: 'NOT_SMALLER', message, usage: { inputTokens: 400, outputTokens: 90 }, calls: 1 })).toBe(`· not compacted (manual): ${message}`)
    expect(compactionLine(start, 'compaction/failed', { code: 'SUMMARY_FAILED', message: 'the summary call failed' })).toBe(
      '· compaction (manual) failed: SUMMARY_FAILED: the summary call failed (nothing was lost)',
    )
    expect(skippedLine({ kind: 'skipped', reason: 'manual', code: 'NOT_SMALLER', why: message, seq: 12 })).toBeUndefined()
    expect(skippedLine({ kind: 'skipped', reason: 'manual', code: 'NOTHING_TO_COMPACT', why: 'nothing to compact: …' })).toBe('· nothing to compact: …')
    expect(skippedLine({ kind: 'summary', reason: 'manual', seq: 12, from: 1, to: 9, tokensBefore: 900, tokensAfter: 300 })).toBeUndefined()
  })
})
