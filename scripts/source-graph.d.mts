export interface WorkspacePackage {
  dir: string
  name: string | undefined
  json: Record<string, any> | undefined
  error?: string
}
export interface ImportSite { specifier: string; line: number; typeOnly: boolean }
export function rel(root: string, path: string): string
export function listPackages(root: string): WorkspacePackage[]
export function listCode(dir: string): string[]
export function importsOf(file: string, text?: string): ImportSite[]
export function resolveRelative(fromFile: string, specifier: string): string | undefined
export function workspaceResolver(packages: WorkspacePackage[]): (specifier: string) => string | undefined
export function packageOf(packages: WorkspacePackage[], file: string): WorkspacePackage | undefined
