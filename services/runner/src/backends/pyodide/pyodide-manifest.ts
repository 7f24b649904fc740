/**
 * What a pyodide sandbox's Python is and can import, from what the host loads into every sandbox: Pyodide's lock
 * file (the CPython version and the Emscripten it was built for) and the operator's package zip (each
 * `NAME-VERSION.dist-info` directory in it, the record `importlib.metadata` reads in the sandbox). Nothing else is
 * importable: the stdlib aside, Pyodide fetches nothing. Read in the host process at its boot; no sandbox is booted
 * for it (a boot and an import of `importlib.metadata` take seconds in Pyodide).
 */
import type { HostReady } from './pyodide-host-protocol.ts'

/** The manifest a host reports in its `ready` frame. */
export type PyodideManifest = NonNullable<HostReady['manifest']>

/** The file names in a zip's central directory (no entry is inflated); [] for what is not a zip this reads. */
export function zipNames(zip: Uint8Array): string[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  // The end-of-central-directory record: 22 bytes and a comment of at most 64 KiB, at the end.
  let end = -1
  for (let i = zip.byteLength - 22; i >= Math.max(0, zip.byteLength - 22 - 0xffff); i--)
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i
      break
    }
  if (end < 0) return []
  const count = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  const names: string[] = []
  const text = new TextDecoder()
  for (let n = 0; n < count && at + 46 <= zip.byteLength; n++) {
    if (view.getUint32(at, true) !== 0x02014b50) break
    const nameLength = view.getUint16(at + 28, true)
    const skip = view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    names.push(text.decode(zip.subarray(at + 46, at + 46 + nameLength)))
    at += 46 + nameLength + skip
  }
  return names
}

/** Distribution name → version, from the `NAME-VERSION.dist-info/` directories at the top of a zip. */
export function zipDistributions(zip: Uint8Array | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (zip === undefined) return out
  for (const name of zipNames(zip)) {
    const m = /^([^/]+?)-([^-/]+)\.dist-info\//.exec(name)
    if (m !== null) out[m[1]] = m[2]
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.toLowerCase().localeCompare(b.toLowerCase())))
}

/** The manifest of sandboxes made from Pyodide's `lock` file (its JSON) and the operator's package `zip`. */
export function pyodideManifest(lock: string, zip: Uint8Array | undefined): PyodideManifest {
  const info = (JSON.parse(lock) as { info?: { python?: string; platform?: string } }).info ?? {}
  const emscripten = /^emscripten_(\d+)_(\d+)_(\d+)$/.exec(info.platform ?? '')
  return {
    os: emscripten === null ? 'Emscripten (WebAssembly)' : `Emscripten ${emscripten.slice(1).join('.')} (WebAssembly)`,
    python: info.python ?? 'unknown',
    packages: zipDistributions(zip)
  }
}
