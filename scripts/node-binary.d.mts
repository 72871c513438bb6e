export class NodeBinaryError extends Error {
  constructor(code: string, message: string)
  readonly code: string
}
export interface NodeBinaryOptions {
  cacheDir?: string
  npm?: (args: readonly string[]) => Promise<string>
  platform?: string
  arch?: string
  log?: (line: string) => void
}
export interface NodeBinary {
  version: string
  path: string
  package: string
}
export function platformPackage(platform?: string, arch?: string): string
export function parseSpec(spec: string): string
export function compareVersions(a: string, b: string): number
export function pickVersion(spec: string, versions: readonly string[]): string
export function verifyIntegrity(bytes: Uint8Array, integrity: string, what: string): void
export function defaultCacheDir(env?: NodeJS.ProcessEnv): string
export function runNpm(args: readonly string[]): Promise<string>
export function nodeBinary(spec: string, options?: NodeBinaryOptions): Promise<NodeBinary>
