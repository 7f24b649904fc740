/**
 * The Python environment a sandbox runs, read from the sandbox itself: `manifest.py` (sandbox-images/python) run once,
 * at start-up, by the command of a sandbox of the backend's own kind (the same bubblewrap, root and interpreter as its
 * executor), its JSON on stdout, the judge's compilers it finds among it. What the process and unsafe backends report
 * on /v1/info; the docker image holds the same program's output, written when it was built.
 */
import type { SandboxManifest } from '@sandfleet/protocol'
import type { ExecutorCommand } from '../../sandbox/contract.ts'
import { killGroup, spawnCommand } from './spawn.ts'

/** What only the backend knows of its environment: where it comes from and where its executor sits. */
export type ManifestFields = Pick<SandboxManifest, 'image' | 'build' | 'executor'>

/** Most bytes of output read from the probe (a host with thousands of distributions stays far below). */
const MAX_OUTPUT_BYTES = 1 << 20

/**
 * Runs `command` (manifest.py in a sandbox) and resolves with the manifest it prints, `fields` added; rejects with why
 * when it does not exit 0 with one JSON object within `timeoutMs`.
 */
export async function probeManifest(
  command: ExecutorCommand,
  fields: ManifestFields,
  timeoutMs = 30_000
): Promise<SandboxManifest> {
  const child = spawnCommand(command, 'ignore')
  child.stdin?.end()
  const chunks: Buffer[] = []
  let bytes = 0
  child.stdout?.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes <= MAX_OUTPUT_BYTES) chunks.push(chunk)
  })
  const code = await new Promise<number | string>((resolve) => {
    const timer = setTimeout(() => {
      killGroup(child)
      resolve(`no answer within ${timeoutMs} ms`)
    }, timeoutMs)
    child.once('error', (err) => {
      clearTimeout(timer)
      resolve(err.message)
    })
    child.once('close', (exit, signal) => {
      clearTimeout(timer)
      resolve(exit ?? `killed by ${signal ?? 'a signal'}`)
    })
  })
  if (code !== 0)
    throw new Error(`manifest.py in a sandbox failed: ${typeof code === 'number' ? `exit ${code}` : code}`)
  let read: unknown
  try {
    read = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new Error('manifest.py in a sandbox printed no JSON')
  }
  const { python, os, packages, compilers } = (read ?? {}) as Partial<SandboxManifest>
  if (typeof python !== 'string' || typeof os !== 'string' || typeof packages !== 'object' || packages === null)
    throw new Error('manifest.py in a sandbox printed no python, os and packages')
  // the judge's compilers, when the sandbox holds any (an older manifest.py lists none)
  const hasCompilers = typeof compilers === 'object' && compilers !== null && Object.keys(compilers).length > 0
  return { ...fields, os, python, packages, ...(hasCompilers ? { compilers } : {}) }
}
