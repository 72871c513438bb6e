import { createRequire } from 'node:module'
import type { Language as TsLanguage, Node as TsNode, Parser as TsParser } from '@vscode/tree-sitter-wasm'

/**
 * The bash grammar of tree-sitter (`tree-sitter-bash`), as the VS Code team
 * ships it prebuilt for WebAssembly in `@vscode/tree-sitter-wasm`: a
 * maintained parser that reads bash as bash does (quoting, substitutions,
 * heredocs, redirections, compound commands), with no native build and no
 * install script. It is loaded once per process, on first use (about 60 ms);
 * a parse of a typical command then takes well under a millisecond.
 *
 * The module is CommonJS (UMD); it is loaded with `require`, so no bundler
 * or test runner has to understand its WebAssembly loading.
 */
export type SyntaxNode = TsNode

interface TreeSitterModule {
  Parser: typeof TsParser
  Language: typeof TsLanguage
}

let loading: Promise<TsParser> | undefined

/** The shared parser, set to bash (loaded on the first call). */
export function bashParser(): Promise<TsParser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url)
    const module = require('@vscode/tree-sitter-wasm') as TreeSitterModule
    await module.Parser.init()
    const bash = await module.Language.load(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm'))
    const parser = new module.Parser()
    parser.setLanguage(bash)
    return parser
  })()
  // A failed load is not cached: the next call tries again (and fails closed meanwhile).
  loading.catch(() => (loading = undefined))
  return loading
}
