import { randomBytes } from 'node:crypto'
import { mkdir, readFile, realpath, rename, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { PermissionsError } from './errors'
import { PermissionRuleSchema, ruleProblem, type PermissionRule } from './rules'

/** The settings file of the user (in their config directory) and of a workspace (`.dsh/` at its root). */
export const SETTINGS_FILE = 'settings.json'
/** The workspace settings file, relative to the workspace root. */
export const PROJECT_SETTINGS = join('.dsh', SETTINGS_FILE)
/** The trust store, in the user's config directory (never in a workspace). */
export const TRUST_FILE = 'trusted-workspaces.json'

const SettingsSchema = z.looseObject({
  permissions: z.strictObject({ rules: z.array(PermissionRuleSchema).default([]) }).optional(),
})

/**
 * The permission rules of a settings file (`{ "permissions": { "rules": [...] } }`;
 * other top-level keys are left for other settings), or undefined when the
 * file does not exist. A file that is not JSON or holds a malformed rule
 * throws `INVALID_SETTINGS` naming the file and the rule: a rule silently
 * skipped could be a deny the person relies on.
 */
export async function readSettingsRules(file: string): Promise<PermissionRule[] | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new PermissionsError('INVALID_SETTINGS', `${file}: cannot be read (${(error as Error).message})`, { cause: error })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new PermissionsError('INVALID_SETTINGS', `${file}: not valid JSON (${(error as Error).message})`, { cause: error })
  }
  const parsed = SettingsSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new PermissionsError('INVALID_SETTINGS', `${file}: ${issue.path.join('.') || 'the file'}: ${issue.message}`)
  }
  const rules = (parsed.data.permissions?.rules ?? []) as PermissionRule[]
  rules.forEach((rule, index) => {
    const problem = ruleProblem(rule)
    if (problem) throw new PermissionsError('INVALID_SETTINGS', `${file}: permissions.rules.${index}: ${problem}`)
  })
  return rules
}

const TrustSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(z.string(), z.object({ trustedAt: z.string() })),
})
type TrustData = z.infer<typeof TrustSchema>

/**
 * Which workspaces the person has trusted, in `trusted-workspaces.json` in
 * the user's config directory (never in the workspace: a repository must not
 * be able to trust itself). A workspace is keyed by its real path (symbolic
 * links resolved). The file is written whole to a temporary name and renamed
 * over the old one, readable by the user only.
 */
export class TrustStore {
  readonly file: string

  constructor(readonly directory: string) {
    this.file = join(directory, TRUST_FILE)
  }

  /** Whether `root` was trusted. A missing store trusts nothing; an unreadable one throws `TRUST_STORE`. */
  async isTrusted(root: string): Promise<boolean> {
    const data = await this.read()
    return Object.hasOwn(data.workspaces, await realRoot(root))
  }

  /** Records that the person trusts `root`. Throws `TRUST_STORE` when the file cannot be written. */
  async trust(root: string, now = new Date()): Promise<void> {
    const data = await this.read()
    data.workspaces[await realRoot(root)] = { trustedAt: now.toISOString() }
    try {
      await mkdir(this.directory, { recursive: true, mode: 0o700 })
      const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 })
      await rename(temporary, this.file)
    } catch (error) {
      throw new PermissionsError('TRUST_STORE', `cannot record the trust in ${this.file}: ${(error as Error).message}`, { cause: error })
    }
  }

  private async read(): Promise<TrustData> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, workspaces: {} }
      throw new PermissionsError('TRUST_STORE', `cannot read ${this.file}: ${(error as Error).message}`, { cause: error })
    }
    try {
      return TrustSchema.parse(JSON.parse(text))
    } catch (error) {
      throw new PermissionsError('TRUST_STORE', `${this.file} is damaged (${(error as Error).message}); fix or delete it`, { cause: error })
    }
  }
}

async function realRoot(root: string): Promise<string> {
  const absolute = resolve(root)
  try {
    return await realpath(absolute)
  } catch {
    return absolute
  }
}
