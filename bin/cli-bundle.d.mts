/** A digest of the CLI's sources (path, size, mtime of each .ts and workspace package.json). */
export function sourceKey(root?: string): string
/**
 * Bundles cli/src/main.ts (and the pyodide host's entry, pyodide-host.js) into `dir` (made aside, then renamed into
 * place).
 */
export function buildCliBundle(dir: string, root?: string): Promise<void>
/** The URL of the bundle of the current sources (built when missing), or undefined when it cannot be had. */
export function cliBundle(cacheDir?: string, root?: string): Promise<string | undefined>
/** The bundle's entry points: output name → source path relative to the repository's root. */
export const CLI_ENTRY_POINTS: Readonly<Record<string, string>>
