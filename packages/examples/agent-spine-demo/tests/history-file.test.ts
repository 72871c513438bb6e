import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HISTORY_FILE_NAME, HISTORY_KEEP, PromptHistoryFile } from '../src/cli/interactive/history-file'

const temp = () => mkdtempSync(join(tmpdir(), 'dsh-history-'))

/** A history over `dir` that collects its warnings. */
function history(dir: string, redact?: (text: string) => string) {
  const warnings: string[] = []
  return { file: new PromptHistoryFile(dir, (line) => warnings.push(line), redact), warnings }
}

describe('the prompt history file', () => {
  it('keeps what was entered across runs, multi-line entries whole, without blanks or repeats, readable by its owner only', async () => {
    const data = join(temp(), 'not', 'yet', 'there')
    const first = history(data)
    expect(await first.file.load()).toEqual([])
    for (const entry of ['hello', 'first line\nsecond line', 'first line\nsecond line', '   ', '/cost', 'hello']) first.file.add(entry)
    await first.file.flush()
    const second = history(data)
    expect(await second.file.load()).toEqual(['hello', 'first line\nsecond line', '/cost', 'hello'])
    // A new run does not repeat the entry the file ends with either.
    second.file.add('hello')
    second.file.add('next')
    await second.file.flush()
    expect(readFileSync(join(data, HISTORY_FILE_NAME), 'utf8')).toBe('"hello"\n"first line\\nsecond line"\n"/cost"\n"hello"\n"next"\n')
    expect(statSync(join(data, HISTORY_FILE_NAME)).mode & 0o777).toBe(0o600)
    expect([...first.warnings, ...second.warnings]).toEqual([])
  })

  it('writes entries through the redaction it is given', async () => {
    const data = temp()
    const { file } = history(data, (text) => text.replaceAll('sk-live-0123456789', '[REDACTED]'))
    file.add('my key is sk-live-0123456789, keep it')
    await file.flush()
    expect(readFileSync(join(data, HISTORY_FILE_NAME), 'utf8')).toBe('"my key is [REDACTED], keep it"\n')
  })

  it('skips lines that are not entries and says which, keeping the rest', async () => {
    const data = temp()
    writeFileSync(join(data, HISTORY_FILE_NAME), '"one"\nnot json\n42\n"two"\n{"torn": \n')
    const { file, warnings } = history(data)
    expect(await file.load()).toEqual(['one', 'two'])
    expect(warnings).toEqual([`! ${join(data, HISTORY_FILE_NAME)}: 3 lines are not a history entry (the first: line 2); they were skipped`])
  })

  it('keeps the last entries only, and cuts the file back to them when it has grown to twice as many', async () => {
    const data = temp()
    const entries = Array.from({ length: 2 * HISTORY_KEEP }, (_, i) => `prompt ${i}`)
    writeFileSync(join(data, HISTORY_FILE_NAME), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''))
    const { file, warnings } = history(data)
    expect(await file.load()).toEqual(entries.slice(-HISTORY_KEEP))
    file.add('after the cut')
    await file.flush()
    const lines = readFileSync(join(data, HISTORY_FILE_NAME), 'utf8').trimEnd().split('\n')
    expect(lines).toEqual([...entries.slice(-HISTORY_KEEP), 'after the cut'].map((entry) => JSON.stringify(entry)))
    // No temporary file is left beside it.
    expect(readdirSync(data)).toEqual([HISTORY_FILE_NAME])
    expect(warnings).toEqual([])
  })

  it('says once that it cannot write, and the run goes on without it', async () => {
    const parent = temp()
    const data = join(parent, 'a-file')
    writeFileSync(data, 'not a directory')
    const { file, warnings } = history(data)
    file.add('one')
    file.add('two')
    await file.flush()
    file.add('three')
    await file.flush()
    expect(warnings).toEqual([`! the prompt history ${join(data, HISTORY_FILE_NAME)} cannot be written (EEXIST): Up recalls only this run's messages`])
  })

  it('says that it cannot read a history that is not a file, and starts empty', async () => {
    const data = temp()
    mkdirSync(join(data, HISTORY_FILE_NAME))
    const { file, warnings } = history(data)
    expect(await file.load()).toEqual([])
    file.add('one')
    await file.flush()
    expect(warnings).toEqual([`! the prompt history ${join(data, HISTORY_FILE_NAME)} cannot be read (EISDIR): Up recalls only this run's messages`])
  })
})
