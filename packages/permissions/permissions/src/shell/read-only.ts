import type { ShellCommand, ShellPart, ShellWord } from './command'
import { prefixWords, startsWith } from './prefix'

/**
 * Checks the arguments of one read-only command: a sentence saying what is
 * wrong, or undefined when the call only reads. `args` are the words after
 * the command's name.
 */
type ArgumentCheck = (args: readonly ShellWord[], part: ShellPart) => string | undefined

const anyArguments: ArgumentCheck = () => undefined

/**
 * Commands whose options decide whether they write or run something: every
 * argument must be known before the run (`find . $X` could be
 * `find . -delete`; `find . *` could meet a file named `-delete`).
 */
function literal(check: (args: readonly string[], part: ShellPart) => string | undefined): ArgumentCheck {
  return (args, part) => {
    // What is known is checked first, for the clearest reason (`find -delete deletes files`).
    const known = check(
      args.filter((arg) => arg.text !== undefined && !arg.expands).map((arg) => arg.text!),
      part,
    )
    if (known) return known
    if (args.some((arg) => arg.text === undefined || arg.expands)) {
      return `"${clip(part.text)}" has arguments computed at run time (a variable, a substitution or a glob), so it cannot be checked`
    }
    return undefined
  }
}

const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'])

const findCheck = literal((args) => {
  const action = args.find((arg) => FIND_ACTIONS.has(arg))
  return action ? `find ${action} ${action === '-delete' ? 'deletes files' : action.startsWith('-f') ? 'writes a file' : 'runs commands'}` : undefined
})

const sortCheck = literal((args) => {
  const bad = args.find((arg) => /^-[a-zA-Z]*o/.test(arg) || abbreviates(arg, 'output') || abbreviates(arg, 'compress-program'))
  return bad ? `sort ${bad} writes a file or runs a program` : undefined
})

/**
 * Whether `arg` is the long option `--name`, or a prefix of it that the
 * program could take for it: GNU getopt_long and git's option parser accept
 * any unambiguous prefix (`--ou=x` is `--output=x`), so every prefix counts
 * (an ambiguous one is refused by the program anyway).
 */
function abbreviates(arg: string, name: string): boolean {
  if (!arg.startsWith('--') || arg === '--') return false
  const given = arg.slice(2).split('=', 1)[0]!
  return given !== '' && name.startsWith(given)
}

const uniqCheck = literal((args) => {
  const positional = args.filter((arg) => !arg.startsWith('-') || arg === '-')
  return positional.length > 1 ? 'uniq with two file names writes the second one' : undefined
})

const treeCheck = literal((args) => (args.some((arg) => arg === '-o' || arg.startsWith('-o')) ? 'tree -o writes a file' : undefined))

const rgCheck = literal((args) => (args.some((arg) => arg.startsWith('--pre')) ? 'rg --pre runs a program on every file' : undefined))

/** sed's options that take no argument, short and long (`-n`, `--quiet`, …): none of them writes or runs anything. */
const SED_FLAGS = new Set(['n', 'E', 'r', 's', 'u', 'z', 'b'])
const SED_LONG_FLAGS = new Set(['quiet', 'silent', 'regexp-extended', 'separate', 'unbuffered', 'null-data', 'zero-terminated', 'posix', 'debug', 'sandbox', 'binary'])

/**
 * sed's arguments read as GNU sed reads them: short options in clusters
 * (`-ne p`), `-e`'s script attached or not (`-es/a/b/`, `-e s/a/b/`), long
 * options only when spelled in full (GNU sed takes any unambiguous prefix,
 * so `--in-pl` is `--in-place`: an option not on the list is refused), and
 * the first operand as the script when no `-e` gave one. `-i` and `-f` are
 * refused; every script is checked by `sedScriptProblem`.
 */
const sedCheck = literal((args) => {
  const scripts: string[] = []
  let operands = false
  let scriptGiven = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (operands || !arg.startsWith('-') || arg === '-') {
      if (!scriptGiven) scripts.push(arg)
      scriptGiven = true
      continue
    }
    if (arg === '--') {
      operands = true
      continue
    }
    if (arg.startsWith('--')) {
      const [name, value] = splitLong(arg)
      if (name === 'expression' || name === 'line-length') {
        const argument = value ?? args[++i]
        if (argument === undefined) return `sed --${name} without its argument`
        if (name === 'expression') {
          scripts.push(argument)
          scriptGiven = true
        }
      } else if (name === 'in-place') {
        return 'sed -i edits files in place'
      } else if (name === 'file') {
        return 'sed -f reads a script that cannot be checked'
      } else if (!SED_LONG_FLAGS.has(name) || value !== undefined) {
        return `sed ${arg} is not an option these checks know (it may stand for --in-place or --file)`
      }
      continue
    }
    for (let j = 1; j < arg.length; j++) {
      const flag = arg[j]!
      if (flag === 'i') return 'sed -i edits files in place'
      if (flag === 'f') return 'sed -f reads a script that cannot be checked'
      if (flag === 'e' || flag === 'l') {
        // The rest of the cluster is the argument, or else the next word.
        const argument = j + 1 < arg.length ? arg.slice(j + 1) : args[++i]
        if (argument === undefined) return `sed -${flag} without its argument`
        if (flag === 'e') {
          scripts.push(argument)
          scriptGiven = true
        }
        break
      }
      if (!SED_FLAGS.has(flag)) return `sed -${flag} is not an option these checks know`
    }
  }
  for (const script of scripts) {
    const problem = sedScriptProblem(script)
    if (problem) return problem
  }
  return undefined
})

/** `--name=value` → `['name', 'value']`; `--name` → `['name', undefined]`. */
function splitLong(arg: string): [string, string | undefined] {
  const equals = arg.indexOf('=')
  return equals < 0 ? [arg.slice(2), undefined] : [arg.slice(2, equals), arg.slice(equals + 1)]
}

/** git grep's short options that take an argument (`-e PATTERN`, `-A 3`, …): the rest of a cluster after one of them is that argument. */
const GIT_GREP_SHORT_ARGUMENTS = new Set(['e', 'f', 'A', 'B', 'C', 'm'])

/** Whether git grep runs a pager program: `-O`, also inside a cluster (`-iO…`), or `--open-files-in-pager` by any prefix. */
function gitGrepOpensPager(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false
    if (abbreviates(arg, 'open-files-in-pager')) return true
    if (arg.startsWith('-') && !arg.startsWith('--')) {
      for (let j = 1; j < arg.length; j++) {
        if (arg[j] === 'O') return true
        if (GIT_GREP_SHORT_ARGUMENTS.has(arg[j]!)) break
      }
    }
  }
  return false
}

/**
 * printf -v sets a shell variable (`printf -v PATH …` changes which programs
 * later parts run). printf reads options only before its format, so only the
 * first argument is looked at; one computed at run time could be `-v`.
 */
const printfCheck: ArgumentCheck = (args, part) => {
  const first = args[0]
  if (first && (first.text === undefined || first.expands)) return `"${clip(part.text)}" has a format computed at run time (it could be -v), so it cannot be checked`
  return first?.text?.startsWith('-v') ? 'printf -v sets a variable, which can change what later commands run' : undefined
}

/** `git` subcommands that only read, each with a check of its arguments. */
const GIT: Record<string, (args: readonly string[]) => string | undefined> = {
  status: () => undefined,
  log: () => undefined,
  diff: () => undefined,
  show: () => undefined,
  blame: () => undefined,
  'ls-files': () => undefined,
  'ls-tree': () => undefined,
  'rev-parse': () => undefined,
  describe: () => undefined,
  shortlog: () => undefined,
  'cat-file': () => undefined,
  grep: (args) => (gitGrepOpensPager(args) ? 'git grep -O runs a pager program' : undefined),
  branch: (args) => listOnly(args, ['-a', '-r', '-l', '-v', '-vv', '--all', '--remotes', '--list', '--verbose', '--show-current', '--no-color', '--color'], 'git branch with these arguments changes branches'),
  tag: (args) => listOnly(args, ['-l', '--list', '-n'], 'git tag with these arguments creates or deletes tags'),
  remote: (args) => (args.length === 0 || (args.length === 1 && (args[0] === '-v' || args[0] === '--verbose')) || (args[0] === 'get-url' && args.length === 2) ? undefined : 'git remote with these arguments changes remotes'),
  stash: (args) => (args[0] === 'list' || args[0] === 'show' ? undefined : 'git stash changes the working tree'),
  reflog: (args) => (args.length === 0 || args[0] === 'show' ? undefined : 'git reflog with these arguments changes the reflog'),
}

/** The options every read-only git call is refused with: they write a file or run a program. */
const GIT_WRITING_OPTIONS = ['--output', '--ext-diff', '--exec', '--upload-pack']

const gitCheck = literal((args) => {
  const sub = args[0]
  if (sub === undefined) return 'git without a subcommand'
  if (sub.startsWith('-')) return `git options before the subcommand (${sub}) can change what git runs`
  const check = GIT[sub]
  if (!check) return `git ${sub} is not a read-only git command`
  const bad = args.find((arg) => GIT_WRITING_OPTIONS.some((option) => abbreviates(arg, option.slice(2))))
  if (bad) return `git ${sub} ${bad} writes a file or runs a program`
  return check(args.slice(1))
})

function listOnly(args: readonly string[], options: readonly string[], problem: string): string | undefined {
  const listing = args.includes('-l') || args.includes('--list')
  for (const arg of args) {
    if (arg.startsWith('-') ? !options.includes(arg) : !listing) return problem
  }
  return undefined
}

/**
 * The commands that run in plan mode, when every part of a command line is
 * one of them and nothing is redirected into a file. Reading, listing,
 * searching and looking at git history; nothing that writes a file, runs
 * another command, or changes the repository.
 */
export const READ_ONLY_COMMANDS: Readonly<Record<string, ArgumentCheck>> = Object.freeze({
  ls: anyArguments,
  cat: anyArguments,
  head: anyArguments,
  tail: anyArguments,
  wc: anyArguments,
  nl: anyArguments,
  cut: anyArguments,
  tr: anyArguments,
  diff: anyArguments,
  cmp: anyArguments,
  comm: anyArguments,
  column: anyArguments,
  jq: anyArguments,
  du: anyArguments,
  df: anyArguments,
  stat: anyArguments,
  pwd: anyArguments,
  cd: anyArguments,
  echo: anyArguments,
  printf: printfCheck,
  true: anyArguments,
  false: anyArguments,
  test: anyArguments,
  '[': anyArguments,
  which: anyArguments,
  type: anyArguments,
  basename: anyArguments,
  dirname: anyArguments,
  realpath: anyArguments,
  readlink: anyArguments,
  whoami: anyArguments,
  id: anyArguments,
  uname: anyArguments,
  grep: anyArguments,
  egrep: anyArguments,
  fgrep: anyArguments,
  rg: rgCheck,
  find: findCheck,
  sort: sortCheck,
  uniq: uniqCheck,
  tree: treeCheck,
  sed: sedCheck,
  git: gitCheck,
})

/**
 * Why `command` is not read-only, in a few words the model can act on
 * (`"git commit -m x": git commit is not a read-only git command`), or
 * undefined when every part of it is on the read-only list (or starts with
 * one of `extra`, the configured prefixes) and nothing is redirected into a
 * file. A command that could not be parsed is never read-only.
 */
export function readOnlyProblem(command: ShellCommand, extra: readonly string[] = []): string | undefined {
  if (command.kind === 'unparsed') return `the command could not be checked: ${command.reason}`
  const write = command.writes[0]
  if (write) return `"${clip(write.text)}" redirects output into a file`
  const prefixes = extra.map(prefixWords).filter((words) => words.length > 0)
  for (const part of command.parts) {
    if (prefixes.some((words) => startsWith(part, words))) continue
    if (part.assignments) return `"${clip(part.text)}" sets variables, which can change what later commands run`
    const name = part.words[0]
    if (!name || name.text === undefined || name.expands) return `"${clip(part.text)}" runs a command whose name is computed at run time`
    const check = Object.hasOwn(READ_ONLY_COMMANDS, name.text) ? READ_ONLY_COMMANDS[name.text] : undefined
    if (!check) return `${name.text} is not on the read-only list`
    const problem = check(part.words.slice(1), part)
    if (problem) return problem
  }
  return undefined
}

/**
 * Why a sed script is not read-only, or undefined when it only prints,
 * deletes from the output, quits or substitutes (`1,20p`, `/x/d`,
 * `s/a/b/g`). `w`, `W`, `e`, `r` and the `w`/`e` flags of `s` are refused,
 * and so is anything this small reader does not understand.
 */
function sedScriptProblem(script: string): string | undefined {
  let i = 0
  const unclear = `the sed script ${JSON.stringify(clip(script))} could not be checked (only p, d, q, =, n, l and s/…/…/ without w or e are allowed while planning)`
  const skipDelimited = (delimiter: string, sections: number): boolean => {
    for (let section = 0; section < sections; section++) {
      for (;;) {
        i++
        if (i >= script.length) return false
        if (script[i] === '\\') i++
        else if (script[i] === delimiter) break
      }
    }
    i++
    return true
  }
  while (i < script.length) {
    const char = script[i]!
    if (/[\s;{}!,$0-9~+]/.test(char)) {
      i++
    } else if (char === '/') {
      if (!skipDelimited('/', 1)) return unclear
    } else if (char === 's' || char === 'y') {
      const delimiter = script[i + 1]
      if (!delimiter || /[\s\\\n]/.test(delimiter)) return unclear
      i++
      if (!skipDelimited(delimiter, 2)) return unclear
      if (char === 's') {
        const flags = /^[gpiImM0-9]*/.exec(script.slice(i))![0]
        i += flags.length
        if (i < script.length && !/[\s;}]/.test(script[i]!)) return `the sed script ${JSON.stringify(clip(script))} uses a flag that writes a file or runs a command`
      }
    } else if ('pdqQnNl=PD'.includes(char)) {
      i++
    } else if (char === 'w' || char === 'W' || char === 'e' || char === 'r' || char === 'R') {
      return `the sed script ${JSON.stringify(clip(script))} writes a file, reads one in, or runs a command`
    } else {
      return unclear
    }
  }
  return undefined
}

function clip(text: string, max = 120): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
