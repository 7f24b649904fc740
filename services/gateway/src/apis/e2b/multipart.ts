/**
 * `multipart/form-data` bodies (RFC 7578), read whole: the parts of a body already in memory (the gateway's
 * `maxBodyBytes` bounds it), each with its field name, its file name and its bytes. What E2B's SDK uploads files with.
 */

/** One part of a form. */
export interface FormPart {
  name: string
  filename: string | undefined
  data: Buffer
}

/** The boundary a `content-type` header names, or undefined when it names none. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '')
  return m === null ? undefined : (m[1] ?? m[2])
}

/** A header's parameter (`name="x"`), unquoted. */
function param(header: string, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]+)`, 'i').exec(header)
  if (m === null) return undefined
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]
}

/** The parts of `body`, split at `boundary`; throws on a body that is not a form of it. */
export function parseForm(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: FormPart[] = []
  let at = body.indexOf(delimiter)
  if (at === -1) throw new Error('the body holds no part of its boundary')
  for (;;) {
    let start = at + delimiter.length
    if (body[start] === 0x2d && body[start + 1] === 0x2d) return parts // the closing delimiter
    if (body[start] === 0x0d && body[start + 1] === 0x0a) start += 2
    const next = body.indexOf(delimiter, start)
    if (next === -1) throw new Error('a part is not closed by its boundary')
    const headEnd = body.indexOf('\r\n\r\n', start)
    if (headEnd === -1 || headEnd > next) throw new Error('a part has no header end')
    const head = body.subarray(start, headEnd).toString('utf8')
    // the part's data ends at the CRLF before the next delimiter
    const dataEnd = next >= 2 && body[next - 2] === 0x0d && body[next - 1] === 0x0a ? next - 2 : next
    const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? ''
    parts.push({
      name: param(disposition, 'name') ?? '',
      filename: param(disposition, 'filename'),
      data: body.subarray(headEnd + 4, dataEnd)
    })
    at = next
  }
}
