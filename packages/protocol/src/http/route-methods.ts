/**
 * Which methods a path takes, so that a request the router does not match can be told apart:
 * a path no route has (404) from a path that takes other methods (405, with `Allow`). Routes are
 * recorded as the server registers them (Fastify's `onRoute` hook gives method and URL pattern:
 * `/v1/sessions/:id/execute`, `/static/*`).
 *
 * @example
 * ```ts
 * const methods = new RouteMethods()
 * app.addHook('onRoute', (route) => { methods.add(route.method, route.url) })
 * app.setNotFoundHandler((request, reply) => {
 *   const allow = methods.allowed(request.url)
 *   if (allow.length > 0) return reply.code(405).header('allow', allow.join(', ')).send(…)
 *   return reply.code(404).send(…)
 * })
 * ```
 */

/** A URL pattern as a regular expression: `:param` one segment, `*` the rest. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return '[^/]+'
      if (segment === '*') return '.*'
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    })
    .join('/')
  return new RegExp(`^${source}$`)
}

/** The methods each registered URL pattern takes. */
export class RouteMethods {
  readonly #routes = new Map<string, { pattern: RegExp; methods: Set<string> }>()

  /** Records that `url` (a route's pattern) takes `method` (or each of several). */
  add(method: string | readonly string[], url: string): void {
    let route = this.#routes.get(url)
    if (route === undefined) {
      route = { pattern: patternOf(url), methods: new Set() }
      this.#routes.set(url, route)
    }
    for (const m of typeof method === 'string' ? [method] : method) route.methods.add(m.toUpperCase())
  }

  /** The methods some route takes at `url` (its query ignored), sorted; empty when no route has the path. */
  allowed(url: string): string[] {
    const path = url.split('?', 1)[0] ?? ''
    const methods = new Set<string>()
    for (const route of this.#routes.values()) {
      if (route.pattern.test(path)) for (const m of route.methods) methods.add(m)
    }
    return [...methods].sort()
  }
}
