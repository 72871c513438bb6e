// Checks who depends on dsh-agent-loop. The seeds keep the loop replaceable: plugins are written
// against `ctx.agents` and the events, so only the spine bundle, the demo and the test kit may
// depend on the loop (PLUGINS §10). Read from every `packages/*/*/package.json`:
//
// - only those three may name `@deepseek-ai/dsh-agent-loop` in any dependency field (a plugin's
//   tests reach the loop through the test kit, never directly);
// - no other package may reach the loop at run time through them either: the run-time closure
//   (`dependencies`, `peerDependencies`, `optionalDependencies`, followed through workspace
//   packages) of every other package must not contain the loop, so the test kit is only ever a
//   dev dependency and only the demo ships the bundle.
import { listPackages, rel } from './source-graph.mjs'

export const LOOP = '@deepseek-ai/dsh-agent-loop'
/** The packages that may depend on the loop, and why. */
export const LOOP_DEPENDENTS = Object.freeze({
  '@deepseek-ai/dsh-agent-spine': 'the spine bundle mounts the loop',
  '@deepseek-ai/dsh-agent-spine-demo': 'the demo ships the bundle',
  '@deepseek-ai/dsh-testkit': 'the test kit mounts the real spine (and is only ever a dev dependency)',
})

const RUNTIME_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies']
const ALL_FIELDS = [...RUNTIME_FIELDS, 'devDependencies']

/**
 * Every breach of the rule, as `path: message` lines naming the package.json
 * and how the loop is reached (`a → b → @deepseek-ai/dsh-agent-loop`).
 */
export function loopDependencyProblems(root) {
  const packages = listPackages(root)
  const byName = new Map(packages.filter((pkg) => pkg.name).map((pkg) => [pkg.name, pkg]))
  const problems = []
  const allowed = (name) => name === LOOP || Object.hasOwn(LOOP_DEPENDENTS, name)

  for (const pkg of packages) {
    const where = `${rel(root, pkg.dir)}/package.json`
    if (!pkg.json) {
      problems.push(`${where}: cannot be read (${pkg.error})`)
      continue
    }
    if (allowed(pkg.name)) continue
    for (const field of ALL_FIELDS) {
      if (pkg.json[field]?.[LOOP] !== undefined) {
        problems.push(`${where}: ${pkg.name} lists ${LOOP} in ${field}; plugins depend on @deepseek-ai/dsh-agent (ctx.agents) and test against the spine through @deepseek-ai/dsh-testkit`)
      }
    }
    const path = runtimePathToLoop(pkg.name, byName)
    if (path && path.length > 2) {
      problems.push(`${where}: ${pkg.name} reaches ${LOOP} at run time through ${path.slice(1, -1).join(' → ')} (${path.join(' → ')}); list that package in devDependencies`)
    }
  }
  return problems
}

/** The shortest run-time dependency path from `name` to the loop (names, both ends included), if any. */
function runtimePathToLoop(name, byName) {
  const previous = new Map([[name, undefined]])
  const queue = [name]
  for (let i = 0; i < queue.length; i++) {
    const current = queue[i]
    const json = byName.get(current)?.json
    if (!json) continue
    for (const field of RUNTIME_FIELDS) {
      for (const dependency of Object.keys(json[field] ?? {}).sort()) {
        if (previous.has(dependency) || !byName.has(dependency)) continue
        previous.set(dependency, current)
        if (dependency === LOOP) {
          const path = [LOOP]
          for (let at = current; at !== undefined; at = previous.get(at)) path.unshift(at)
          return path
        }
        queue.push(dependency)
      }
    }
  }
  return undefined
}
