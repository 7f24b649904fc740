/**
 * Every example `/docs` offers, sent as the page sends it, to a real fleet (bubblewrap runner,
 * gateway over HTTP, API keys on): the page's own functions (`example`, which fills each request
 * body from the operation's schema, and `requestOf`, which makes the request its "Send" button
 * sends) run here on the live openapi.json. Each example works as given: a 2xx answer, with a body
 * where the operation answers one. A path parameter is what a user would type: the id of what
 * the page's own example of another operation made (a session, an E2B sandbox).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DOCS_PAGE } from '../services/gateway/src/routes/docs-page.ts'
import { startFleet } from './helpers/fleet.ts'

const KEY = 'docs-examples-key'

interface Operation {
  operationId?: string
  parameters?: Array<{ name: string; in: string }>
  requestBody?: { content?: Record<string, { schema: unknown; example?: unknown }> }
  responses?: Record<string, { content?: Record<string, unknown> }>
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } }
type RequestOf = (
  path: string,
  method: string,
  op: Operation,
  params: Record<string, string>,
  body: string | null,
  key: string
) => { url: string; init: RequestInit }

/** The page's function `name`, as its script defines it. */
function pageFunction(name: string): string {
  const start = DOCS_PAGE.indexOf(`\nfunction ${name} (`)
  assert.ok(start >= 0, `the page defines ${name}`)
  return DOCS_PAGE.slice(start, DOCS_PAGE.indexOf('\n}\n', start) + 3)
}

/** The page's `bodyExample` and `requestOf`, bound to `doc` as the page's script binds them. */
function pageFunctions(doc: Doc): { bodyExample: (media: unknown) => unknown; requestOf: RequestOf } {
  const source = ['refName', 'resolve', 'example', 'bodyExample', 'requestOf'].map(pageFunction).join('\n')

  return new Function('doc', `'use strict'\n${source}\nreturn { bodyExample, requestOf }`)(doc) as ReturnType<
    typeof pageFunctions
  >
}

test('/docs: every example, sent as the page sends it, works as given', async () => {
  const fleet = await startFleet(['docs-1'], { poolSize: 2, maxSessions: 4 }, { apiKeys: [KEY] })
  try {
    const doc = (await (await fetch(`${fleet.url}/openapi.json`)).json()) as Doc
    const { bodyExample, requestOf } = pageFunctions(doc)
    const send = async (path: string, method: string, params: Record<string, string> = {}): Promise<Response> => {
      const op = doc.paths[path][method]
      const media = op.requestBody?.content?.['application/json']
      const body = media === undefined ? null : JSON.stringify(bodyExample(media), null, 2)
      const { url, init } = requestOf(path, method, op, params, body, KEY)
      return await fetch(new URL(url, `${fleet.url}/docs`), init)
    }
    // What a user types into a path parameter: the id of what the page's own example of another operation made (a
    // session, an E2B sandbox), closed after the operation whatever it did.
    const MAKERS: Record<string, { path: string; field: string; close: string }> = {
      id: { path: '/v1/sessions', field: 'session_id', close: '/v1/sessions/{id}' },
      sandboxID: { path: '/v2/sandboxes', field: 'sandboxID', close: '/sandboxes/{sandboxID}' }
    }
    const make = async (name: string): Promise<string> => {
      const maker = MAKERS[name]
      assert.ok(maker !== undefined, `a path parameter the test knows how to fill: ${name}`)
      const made = await send(maker.path, 'post')
      assert.equal(made.status, 201, `${maker.path}: ${await made.clone().text()}`)
      return String(((await made.json()) as Record<string, unknown>)[maker.field])
    }
    /** `status` is one `documented` names, exactly or by its class (`4XX`). */
    const documents = (documented: string[], status: number): boolean =>
      documented.includes(String(status)) || documented.includes(`${String(status)[0]}XX`)
    const tried: string[] = []
    const failed: string[] = []
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) {
        const params: Record<string, string> = {}
        for (const p of op.parameters ?? []) if (p.in === 'path') params[p.name] = await make(p.name)
        const res = await send(path, method, params)
        const text = await res.text()
        const what = `${method.toUpperCase()} ${path} (${op.operationId ?? '?'}): HTTP ${res.status} ${text.slice(0, 300)}`
        const documented = Object.keys(op.responses ?? {})
        if (res.redirected && documented.some((code) => /^3/.test(code))) {
          // A moved address (documented 3xx): the page's fetch follows it, as a browser does; it must lead somewhere.
          if (res.status !== 200) failed.push(`${what}: the redirect leads nowhere`)
        } else if (!documented.some((code) => /^2/.test(code))) {
          // An operation offered only to say it is not (MCP's GET and DELETE on a stateless server, E2B's pause): as
          // documented.
          if (!documents(documented, res.status)) failed.push(`${what}: not a status it documents`)
        } else if (res.status < 200 || res.status >= 300) failed.push(what)
        else if (res.status !== 204 && text.length === 0) failed.push(`${what}: no body`)
        tried.push(`${method} ${path}`)
        for (const [name, value] of Object.entries(params)) {
          const close = MAKERS[name].close
          await send(close, 'delete', { [name]: value }).catch(() => undefined)
        }
      }
    assert.deepEqual(failed, [])
    assert.ok(tried.length >= 20, `every operation was tried: ${tried.length}`)
  } finally {
    await fleet.close()
  }
})
