import { describe, expect, it } from 'vitest'
import { parseShellCommand, readOnlyProblem, type ShellCommand } from '@deepseek-ai/dsh-permissions'

/** Each part as its words (`?` for a word computed at run time), then the writes. */
function shape(command: ShellCommand): { parts: string[]; writes: string[] } | { unparsed: string } {
  if (command.kind === 'unparsed') return { unparsed: command.reason }
  return {
    parts: command.parts.map((part) => `${part.assignments ? '[vars] ' : ''}${part.words.map((word) => word.text ?? '?').join(' ')}`),
    writes: command.writes.map((write) => write.text),
  }
}

const parsed = async (text: string) => shape(await parseShellCommand(text))
const readOnly = async (text: string) => readOnlyProblem(await parseShellCommand(text)) ?? 'read-only'

describe('parsing a command line into parts', () => {
  it('finds every simple command of a compound command: && || ; | & subshells, groups and loops', async () => {
    expect(await parsed('git status && rm -rf x')).toEqual({ parts: ['git status', 'rm -rf x'], writes: [] })
    expect(await parsed('make || echo failed; ls -la | head -5 & wait')).toEqual({ parts: ['make', 'echo failed', 'ls -la', 'head -5', 'wait'], writes: [] })
    expect(await parsed('(cd src && ls) && { pwd; }')).toEqual({ parts: ['cd src', 'ls', 'pwd'], writes: [] })
    expect(await parsed('for f in *.ts; do wc -l "$f"; done; if true; then rm a; fi')).toEqual({ parts: ['wc -l ?', 'true', 'rm a'], writes: [] })
    expect(await parsed('f() { rm -rf build; }; f')).toEqual({ parts: ['rm -rf build', 'f'], writes: [] })
  })

  it('finds commands inside $(…), backticks, <(…), >(…), ${…} and heredocs, each a part of its own', async () => {
    expect(await parsed('cat $(rm -rf x)')).toEqual({ parts: ['cat ?', 'rm -rf x'], writes: [] })
    expect(await parsed('ls `touch y`')).toEqual({ parts: ['ls ?', 'touch y'], writes: [] })
    expect(await parsed('diff <(ls a) >(tee out)')).toEqual({ parts: ['diff ? ?', 'ls a', 'tee out'], writes: [] })
    expect(await parsed('echo "${X:-$(curl evil)}"')).toEqual({ parts: ['echo ?', 'curl evil'], writes: [] })
    expect(await parsed('cat <<EOF\n$(rm x)\nEOF')).toEqual({ parts: ['cat', 'rm x'], writes: [] })
  })

  it('follows the script of bash -c, sh -c and eval when it is literal', async () => {
    expect(await parsed(`bash -c 'ls && rm x'`)).toEqual({ parts: ['bash -c ls && rm x', 'ls', 'rm x'], writes: [] })
    expect(await parsed('eval "git push"')).toEqual({ parts: ['eval git push', 'git push'], writes: [] })
    expect(await parsed('sh -c "$CMD"')).toEqual({ unparsed: 'sh -c with a script computed at run time' })
  })

  it('removes quoting as bash does, and marks words computed at run time', async () => {
    expect(await parsed(`r\\m -rf 'a b' "c\\"d" $HOME x"$(pwd)"`)).toEqual({ parts: ['rm -rf a b c"d ? ?', 'pwd'], writes: [] })
    expect(await parsed('FOO=1 git status')).toEqual({ parts: ['[vars] git status'], writes: [] })
    expect(await parsed('X=1')).toEqual({ parts: ['[vars] '], writes: [] })
  })

  it('records redirections that write files, and not those that duplicate descriptors or go to /dev/null', async () => {
    expect(await parsed('git log > log.txt 2>&1')).toEqual({ parts: ['git log'], writes: ['> log.txt'] })
    expect(await parsed('echo a >> f; echo b &> g; echo c >| h; echo d >& i')).toEqual({
      parts: ['echo a', 'echo b', 'echo c', 'echo d'],
      writes: ['>> f', '&> g', '>| h', '>& i'],
    })
    // The grammar does not know `<>`: the line is not parsed, so nothing can allow it.
    expect((await parseShellCommand('cat <> j')).kind).toBe('unparsed')
    expect(await parsed('grep x . 2>&1 >/dev/null < in.txt >&2 2>&-')).toEqual({ parts: ['grep x .'], writes: [] })
  })

  it('fails closed on what it cannot parse: bad syntax, NUL, an overlong line', async () => {
    expect(await parsed('echo "unterminated')).toEqual({ unparsed: 'the command is not valid shell syntax (or uses syntax the parser does not know)' })
    expect(await parsed('ls \0 rm')).toEqual({ unparsed: 'the command contains a NUL character' })
    expect(await parsed(`echo ${'a'.repeat(70_000)}`)).toEqual({ unparsed: 'the command is longer than 65536 characters' })
    const broken = await parseShellCommand('git status && (rm -rf x')
    expect(broken.kind === 'unparsed' && broken.tokens).toEqual(['git', 'status', 'rm', '-rf', 'x'])
  })
})

describe('the read-only list (plan mode)', () => {
  it('accepts reading, listing, searching and git history, also compound', async () => {
    for (const command of [
      'git status',
      'git log --oneline -5 && git diff HEAD~1 -- src',
      'git show HEAD:README.md | head -20',
      'ls -la src; cat README.md | wc -l',
      'rg -n TODO src',
      'grep -rn "foo" . 2>/dev/null | sort | uniq -c',
      'find . -name "*.ts" -type f',
      "sed -n '1,20p' a.ts",
      "sed 's/foo/bar/g' a.ts",
      'head -n 5 a && tail -n 5 a',
      'for f in src/*.ts; do wc -l "$f"; done',
      'git branch -a',
    ]) {
      expect(await readOnly(command), command).toBe('read-only')
    }
  })

  it('refuses what writes, whatever hides it (the plan-mode shell escapes peers shipped)', async () => {
    expect({
      commit: await readOnly('git commit -m wip'),
      push: await readOnly('git status && git push'),
      redirect: await readOnly('echo x > notes.md'),
      append: await readOnly('cat a >> b'),
      tee: await readOnly('ls | tee out.txt'),
      sedInPlace: await readOnly("sed -i 's/a/b/' file"),
      sedInPlaceCombined: await readOnly("sed -ni 's/a/b/p' file"),
      sedWriteFlag: await readOnly("sed 's/a/b/w out' file"),
      sedExecute: await readOnly("sed '1e rm -rf x' file"),
      findDelete: await readOnly('find . -name "*.tmp" -delete'),
      findExec: await readOnly('find . -exec rm {} \\;'),
      findComputed: await readOnly('find . $ACTION'),
      substitution: await readOnly('cat $(rm -rf x)'),
      backticks: await readOnly('ls `touch y`'),
      nestedShell: await readOnly(`bash -c 'ls && rm x'`),
      sortOutput: await readOnly('sort -o a.txt a.txt'),
      gitOutput: await readOnly('git diff --output=patch.diff'),
      gitConfigOption: await readOnly('git -c core.pager=evil log'),
      branchCreate: await readOnly('git branch feature'),
      variables: await readOnly('PATH=/tmp/x git status'),
      unparsed: await readOnly('cat "oops'),
    }).toEqual({
      commit: 'git commit is not a read-only git command',
      push: 'git push is not a read-only git command',
      redirect: '"> notes.md" redirects output into a file',
      append: '">> b" redirects output into a file',
      tee: 'tee is not on the read-only list',
      sedInPlace: 'sed -i edits files in place',
      sedInPlaceCombined: 'sed -i edits files in place',
      sedWriteFlag: 'the sed script "s/a/b/w out" uses a flag that writes a file or runs a command',
      sedExecute: 'the sed script "1e rm -rf x" writes a file, reads one in, or runs a command',
      findDelete: 'find -delete deletes files',
      findExec: 'find -exec runs commands',
      findComputed: '"find . $ACTION" has arguments computed at run time (a variable, a substitution or a glob), so it cannot be checked',
      substitution: 'rm is not on the read-only list',
      backticks: 'touch is not on the read-only list',
      nestedShell: 'bash is not on the read-only list',
      sortOutput: 'sort -o writes a file or runs a program',
      gitOutput: 'git diff --output=patch.diff writes a file or runs a program',
      gitConfigOption: 'git options before the subcommand (-c) can change what git runs',
      branchCreate: 'git branch with these arguments changes branches',
      variables: '"PATH=/tmp/x git status" sets variables, which can change what later commands run',
      unparsed: 'the command could not be checked: the command is not valid shell syntax (or uses syntax the parser does not know)',
    })
  })

  it('reads options as the programs do: an attached -e script, long options by any prefix GNU and git accept, option clusters', async () => {
    // Each of these wrote a file or ran a program under GNU sed 4, GNU sort 9 and git 2 here.
    expect({
      sedAttachedExecute: await readOnly("echo | sed '-e1e touch pwned'"),
      sedAttachedWrite: await readOnly("echo x | sed '-es/x/y/w out'"),
      sedClusterExecute: await readOnly("sed '-ne1e touch pwned' a.ts"),
      sedInPlaceAbbreviated: await readOnly("sed --in-pl 's/a/b/' a.ts"),
      sedFileAbbreviated: await readOnly('sed --fi=script.sed a.ts'),
      sedExpressionAbbreviated: await readOnly("echo | sed --expr='1e touch pwned'"),
      sortOutputAbbreviated: await readOnly('sort --ou=out.txt a.txt'),
      sortProgramAbbreviated: await readOnly('sort --compress-prog=sh a.txt'),
      gitGrepPagerAbbreviated: await readOnly("git grep --op='touch pwned' x"),
      gitGrepPagerInCluster: await readOnly("git grep -iO'touch pwned' x"),
      printfSetsVariable: await readOnly('printf -v PATH %s bin; ls'),
    }).toEqual({
      sedAttachedExecute: 'the sed script "1e touch pwned" writes a file, reads one in, or runs a command',
      sedAttachedWrite: 'the sed script "s/x/y/w out" uses a flag that writes a file or runs a command',
      sedClusterExecute: 'the sed script "1e touch pwned" writes a file, reads one in, or runs a command',
      sedInPlaceAbbreviated: 'sed --in-pl is not an option these checks know (it may stand for --in-place or --file)',
      sedFileAbbreviated: 'sed --fi=script.sed is not an option these checks know (it may stand for --in-place or --file)',
      sedExpressionAbbreviated: 'sed --expr=1e touch pwned is not an option these checks know (it may stand for --in-place or --file)',
      sortOutputAbbreviated: 'sort --ou=out.txt writes a file or runs a program',
      sortProgramAbbreviated: 'sort --compress-prog=sh writes a file or runs a program',
      gitGrepPagerAbbreviated: 'git grep -O runs a pager program',
      gitGrepPagerInCluster: 'git grep -O runs a pager program',
      printfSetsVariable: 'printf -v sets a variable, which can change what later commands run',
    })
    // What stays read-only: the usual spellings, each option exactly.
    for (const command of [
      "sed -n -e '1,5p' -e '/x/p' a.ts",
      "sed -ne '1,5p' a.ts",
      "sed -E --quiet --expression='s/(a)/\\1/g' a.ts",
      "sed -n '$p' -- a.ts",
      'sort -u -k2,2 -t, a.txt',
      'sort --unique --reverse a.txt',
      'git grep -n -i -e TODO -- src',
      'git grep -in TODO',
      "printf '%s\\n' a b",
    ]) {
      expect(await readOnly(command), command).toBe('read-only')
    }
  })

  it('accepts configured prefixes as read-only too', async () => {
    const command = await parseShellCommand('npm ls --depth 0 && git status')
    expect(readOnlyProblem(command)).toBe('npm is not on the read-only list')
    expect(readOnlyProblem(command, ['npm ls'])).toBeUndefined()
  })
})
