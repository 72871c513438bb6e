export const CONTRACTS: string
export const CONTRACTS_ZH: string
export interface CitedId { id: string; column: number }
export interface CitedSection { anchor: string; column: number; text: string }
export interface ParsedContracts {
  anchors: Map<string, number>
  requirements: Map<string, number>
  problems: string[]
}
export interface ContractsResult {
  problems: string[]
  warnings: string[]
  files: number
  citations: number
  requirements: number
}
export function citedIds(line: string): CitedId[]
export function anchorOf(id: string): string
export function citedSections(line: string): CitedSection[]
export function parseContracts(text: string, path: string): ParsedContracts
export function scannedFiles(root: string): string[]
export function checkContracts(root: string): ContractsResult
