/**
 * Why the API key in the environment variable `variable` cannot be used by
 * provider `provider`, as the one line the command line prints before it
 * starts anything, or `undefined` when it can. A variable that is unset or
 * holds only white space is missing (the adapters trim the key, so a blank
 * one would fail the first request as "not set"); a key the adapter would
 * refuse to send (`problem`: the adapter's own `apiKeyProblem`, the check its
 * `checkApiKey` runs) is named with what is wrong and where. The key itself
 * is never quoted.
 */
export function apiKeyVariableProblem(
  variable: string,
  provider: string,
  env: NodeJS.ProcessEnv,
  problem: (key: string) => string | undefined,
): string | undefined {
  const key = env[variable]?.trim()
  if (!key) {
    const state = env[variable] === undefined ? 'is not set' : 'is blank'
    return `${variable} ${state}: export the API key of provider "${provider}" in it (or name another variable with --api-key-env)`
  }
  const why = problem(key)
  if (why === undefined) return undefined
  return `${variable} cannot be sent as the API key of provider "${provider}": it ${why}. Export the key again in ${variable}, exactly as issued`
}
