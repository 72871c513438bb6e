export interface ImportEntry { specifier: string; line: number }
export interface PackageImportsResult {
  problems: string[]
  files: number
  imports: number
  packages: number
}
export function withoutComments(text: string): string
export function importsOf(text: string): ImportEntry[]
export function packageDirs(root: string): string[]
export function importProblem(root: string, own: string, file: string, specifier: string, packages: readonly string[]): string | undefined
export function runtimeDependencyCycles(root: string): string[]
export function checkPackageImports(root: string): PackageImportsResult
