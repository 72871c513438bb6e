export const SOURCE_CONDITION: 'dsh-source'
export const NODE_FLOOR: string
export function packageDirs(root?: string): string[]
export function exportTargets(value: unknown, path?: string[]): { conditions: string[]; target: string | null }[]
export function manifestProblems(manifest: Record<string, any>, files: readonly string[]): string[]
export interface PackedPackage {
  dir: string
  name: string
  tarball: string
  manifest: Record<string, any>
  files: string[]
}
export function packAll(
  destination: string,
  options?: { root?: string; log?: (line: string) => void },
): Promise<{ packed: PackedPackage[]; skipped: { dir: string; name: string }[] }>
