import { existsSync } from 'node:fs'
import type { TestProjectInlineConfiguration } from 'vitest/config'

/**
 * Every project sets `extends: true`: in Vitest 4 an inline project does not
 * inherit the root config otherwise, and would run with the 5 s default timeout
 * instead of the root's ceiling (a slow, loaded machine then turns tests into
 * flakes). `scripts/tests/vitest-config.test.ts` pins this.
 *
 * The package projects. Tests import sibling packages by name and resolve them
 * to their TypeScript sources through the `dsh-source` export condition, so the
 * suite runs without a build step.
 */
const packages = [
  'util/brand',
  'core/scope',
  'llm/llm',
  'llm/llm-scripted',
  'llm/llm-openai',
  'llm/llm-retry',
  'llm/llm-anthropic',
  'core/session',
  'session/session-jsonl',
  'session/session-postgres',
  'core/system-prompt',
  'core/tools',
  'core/agent',
  'core/agent-default-model',
  'core/agent-loop',
  'support/invariants',
  'support/testkit',
  'tools/workspace-tools',
  'permissions/permissions',
  'runtime/agent-spine',
  'examples/agent-spine-demo',
  'compact/compaction',
  'mcp/mcp',
  'tasks/tasks',
  'subagent/subagents',
  'subagent/tool-subagent',
].filter((dir) => existsSync(new URL(`./packages/${dir}/tests`, import.meta.url)))

const conditions = ['dsh-source', 'module', 'node', 'development|production']

function project(dir: string): TestProjectInlineConfiguration {
  return {
    extends: true,
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['dsh-source'] } },
    test: {
      name: dir,
      root: `packages/${dir}`,
      include: ['tests/**/*.test.ts'],
      // The demo's tests each start the CLI as a child process that compiles its TypeScript on
      // start: on two cores more than a few at once only makes each one slower (and closer to its
      // ceiling) without finishing the file sooner.
      ...(dir === 'examples/agent-spine-demo' ? { maxConcurrency: 3 } : {}),
    },
  }
}

/**
 * Every package's type-level tests (`*.test-d.ts`) in one project: Vitest's
 * typecheck mode runs `tsc` over the root tsconfig once, instead of once per
 * package.
 */
const types: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'types',
    root: '.',
    include: [],
    typecheck: {
      enabled: true,
      only: true,
      include: ['packages/*/*/tests/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
  },
}

const scripts: TestProjectInlineConfiguration = {
  extends: true,
  test: { name: 'scripts', root: 'scripts', include: ['tests/**/*.test.ts'] },
}

/**
 * The bench's tests import its scenarios, and through them dsh's packages: the
 * same `dsh-source` resolution as the package projects, or a fresh clone
 * (no `dist/`) fails to resolve them.
 */
const bench: TestProjectInlineConfiguration = {
  extends: true,
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['dsh-source'] } },
  test: { name: 'bench', root: 'bench', include: ['tests/**/*.test.ts'] },
}

export default [...packages.map(project), types, scripts, bench]
