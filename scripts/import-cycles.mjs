// Finds import circles among the package sources (`packages/*/*/src`). Every import counts,
// type-only ones too (issue 16 counted the type circle between session-registry.ts and
// store.ts), and so do imports of another workspace package by name, which resolve to that
// package's source entry: two packages whose sources import each other are a circle as well.
import { join } from 'node:path'
import { importsOf, listCode, listPackages, packageOf, rel, resolveRelative, workspaceResolver } from './source-graph.mjs'

/**
 * The import graph of every package's `src`: a map from each source file to
 * its edges `{ to, line, typeOnly }` (only edges to other source files).
 */
export function sourceGraph(root) {
  const packages = listPackages(root)
  const files = packages.flatMap((pkg) => listCode(join(pkg.dir, 'src')))
  const known = new Set(files)
  const byName = workspaceResolver(packages)
  const graph = new Map()
  for (const file of files) {
    const edges = []
    for (const { specifier, line, typeOnly } of importsOf(file)) {
      const to = specifier.startsWith('.') ? resolveRelative(file, specifier) : byName(specifier)
      if (to && known.has(to) && packageOf(packages, to)) edges.push({ to, line, typeOnly })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The strongly connected components of `graph` (Tarjan), each as a sorted list of files. */
export function components(graph) {
  let counter = 0
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const out = []
  const connect = (node) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const { to } of graph.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to)
        low.set(node, Math.min(low.get(node), low.get(to)))
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node), index.get(to)))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      out.push(component.sort())
    }
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node)
  return out
}

/**
 * One shortest circle through the first file of `component`, as the list of
 * import edges `{ from, to, line, typeOnly }` that close it.
 */
function shortestCircle(graph, component) {
  const members = new Set(component)
  const start = component[0]
  const previous = new Map()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]
    for (const edge of graph.get(node) ?? []) {
      if (!members.has(edge.to)) continue
      if (edge.to === start) {
        const path = [{ from: node, ...edge }]
        for (let at = node; at !== start; ) {
          const step = previous.get(at)
          path.unshift(step)
          at = step.from
        }
        return path
      }
      if (!previous.has(edge.to)) {
        previous.set(edge.to, { from: node, ...edge })
        queue.push(edge.to)
      }
    }
  }
  return []
}

/**
 * Every import circle among the package sources: `{ files, circle }`, where
 * `files` are all the files (relative to `root`) caught in one knot and
 * `circle` one shortest circle through it, as `file:line` hops.
 */
export function findImportCycles(root) {
  const graph = sourceGraph(root)
  const out = []
  for (const component of components(graph)) {
    const selfLoop = component.length === 1 && (graph.get(component[0]) ?? []).some((edge) => edge.to === component[0])
    if (component.length < 2 && !selfLoop) continue
    const circle = shortestCircle(graph, component).map((edge) => ({
      from: rel(root, edge.from),
      to: rel(root, edge.to),
      line: edge.line,
      typeOnly: edge.typeOnly,
    }))
    out.push({ files: component.map((file) => rel(root, file)), circle })
  }
  return out
}

/** A circle as one readable line: `a.ts:3 → b.ts:7 (type) → a.ts`. */
export function describeCycle(cycle) {
  if (cycle.circle.length === 0) return cycle.files.join(' ↔ ')
  const hops = cycle.circle.map((edge) => `${edge.from}:${edge.line}${edge.typeOnly ? ' (type)' : ''}`)
  return `${hops.join(' → ')} → ${cycle.circle[0].from}`
}
