export interface ImportEdge { to: string; line: number; typeOnly: boolean }
export interface ImportCycle {
  files: string[]
  circle: { from: string; to: string; line: number; typeOnly: boolean }[]
}
export function sourceGraph(root: string): Map<string, ImportEdge[]>
export function components(graph: Map<string, { to: string }[]>): string[][]
export function findImportCycles(root: string): ImportCycle[]
export function describeCycle(cycle: ImportCycle): string
