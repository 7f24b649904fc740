/**
 * Every example `/docs` offers, sent as the page sends it, to a real fleet (bubblewrap runner,
 * gateway over HTTP, API keys on): the page's own functions (`example`, which fills each request
 * body from the operation's schema, and `requestOf`, which makes the request its "Send" button
 * sends) run here on the live openapi.json. Each example works as given: a 2xx answer, with a body
 * where the operation answers one. A path parameter is what a user would type: the id of a
 * session made through the page's own example.
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
    // What a user types into a path parameter: a session of the page's own making.
    const session = async (): Promise<string> => {
      const made = await send('/v1/sessions', 'post')
      assert.equal(made.status, 201)
      return ((await made.json()) as { session_id: string }).session_id
    }
    const tried: string[] = []
    const failed: string[] = []
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) {
        const params: Record<string, string> = {}
        for (const p of op.parameters ?? []) if (p.in === 'path') params[p.name] = await session()
        const res = await send(path, method, params)
        const text = await res.text()
        const what = `${method.toUpperCase()} ${path} (${op.operationId ?? '?'}): HTTP ${res.status} ${text.slice(0, 300)}`
        const documented = Object.keys(op.responses ?? {})
        if (res.redirected && documented.some((code) => /^3/.test(code))) {
          // A moved address (documented 3xx): the page's fetch follows it, as a browser does; it must lead somewhere.
          if (res.status !== 200) failed.push(`${what}: the redirect leads nowhere`)
        } else if (!documented.some((code) => /^2/.test(code))) {
          // An operation offered only to say it is not (MCP's GET and DELETE on a stateless server): as documented.
          if (!documented.includes(String(res.status))) failed.push(`${what}: not a status it documents`)
        } else if (res.status < 200 || res.status >= 300) failed.push(what)
        else if (res.status !== 204 && text.length === 0) failed.push(`${what}: no body`)
        tried.push(`${method} ${path}`)
      }
    assert.deepEqual(failed, [])
    assert.ok(tried.length >= 20, `every operation was tried: ${tried.length}`)
  } finally {
    await fleet.close()
  }
})
