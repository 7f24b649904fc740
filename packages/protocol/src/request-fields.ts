/**
 * The fields of a request the fleet decodes, checked before anything runs: each value of `files`
 * is base64 and each of its paths names a place a sandbox can write. A request that fails is the
 * caller's mistake (`invalid_request`, nothing run), never a failure of its code. One definition,
 * used wherever a call enters: the gateway's pipeline (every API, each answering in its own
 * shape), the runner's own check of a call (its HTTP API, `sandfleet serve`, a session's cell),
 * and the compatible APIs that decode files of their own (Piston's encodings).
 *
 * @example
 * ```ts
 * fileFieldsProblem({ files: { 'a.txt': 'hello world!' } })
 * // → { field: 'files/a.txt', message: 'files: the content of "a.txt" is not base64: it holds " " at character 5, …' }
 * ```
 */
import { FILE_PLACES } from './exec.ts'

/** A field the fleet cannot decode: its path in the request (`files/a.txt`) and a line about it, naming it. */
export interface FieldProblem {
  readonly field: string
  readonly message: string
}

/** The base64 alphabet, with its padding at the end only (RFC 4648 §4). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
/** Line breaks, which `base64` (coreutils) puts every 76 characters and every decoder skips. */
const LINE_BREAKS = /[\r\n]/g

/**
 * Why `value` is not base64, or undefined when it is: the standard alphabet (`+`, `/`), padded
 * with `=` to a multiple of 4 characters, as `base64.b64encode`, `btoa` and Buffer's
 * `toString('base64')` write it; line breaks are skipped. (base64url, unpadded text, or plain
 * text sent as is are refused: a sandbox's decoder would fail on them, or silently drop what it
 * does not know.)
 */
export function base64Problem(value: string): string | undefined {
  const text = value.includes('\n') || value.includes('\r') ? value.replace(LINE_BREAKS, '') : value
  if (!BASE64.test(text)) {
    const at = text.search(/[^A-Za-z0-9+/=]/)
    if (at !== -1) return `holds ${JSON.stringify(text[at])} at character ${at}, outside base64's alphabet`
    return "has '=' before its end"
  }
  if (text.length % 4 !== 0) return `is ${text.length} characters long, not a multiple of 4 (missing '=' padding)`
  return undefined
}

/**
 * Why `path`, a file the request writes, names no place a sandbox can write, or undefined when it
 * does: relative to the working directory and staying in it, or absolute in one of
 * {@link FILE_PLACES}, never a place itself. (The sandbox checks again where it writes, links
 * included: this check is what can be known before anything runs, the same on every backend.)
 */
export function filePathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'holds a NUL character'
  if (path.endsWith('/')) return 'ends with /: it names a directory, not a file'
  const parts = segments(path)
  if (path.startsWith('/')) {
    const absolute = '/' + (parts ?? []).join('/')
    if (FILE_PLACES.some((place) => absolute.startsWith(place + '/'))) return undefined
    return `is outside the sandbox's writable places: a path relative to the working directory, or an absolute one in ${FILE_PLACES.join(', ')}`
  }
  if (parts === undefined || parts.length === 0)
    return "is outside the sandbox's writable places: it leaves the working directory (a relative path names a file inside it)"
  return undefined
}

/**
 * `path`'s segments with `.` and `..` resolved as the sandbox resolves them (`/..` is `/`); undefined when a relative
 * path's `..` climbs above its start.
 */
function segments(path: string): string[] | undefined {
  const out: string[] = []
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part !== '..') out.push(part)
    else if (out.pop() === undefined && !path.startsWith('/')) return undefined
  }
  return out
}

/**
 * The first field of `request` the fleet cannot decode, or undefined: a `files` value that is not
 * base64 ({@link base64Problem}) or a path that names no writable place ({@link filePathProblem}).
 * Fields that are not of their type are left to the schema (the parse stage) and not checked here.
 */
export function fileFieldsProblem(request: { files?: unknown }): FieldProblem | undefined {
  const files = request.files
  if (typeof files !== 'object' || files === null) return undefined
  for (const [path, content] of Object.entries(files as Record<string, unknown>)) {
    const field = `files/${path}`
    const where = filePathProblem(path)
    if (where !== undefined) return { field, message: `files: the path ${JSON.stringify(path)} ${where}` }
    if (typeof content !== 'string') continue
    const what = base64Problem(content)
    if (what !== undefined)
      return { field, message: `files: the content of ${JSON.stringify(path)} is not base64: it ${what}` }
  }
  return undefined
}
