/**
 * The JSON body parser of both services: Fastify's own (a `__proto__` or `constructor.prototype`
 * key refused), and a body nested deeper than the contract's `LIMITS.maxJsonDepth` refused as
 * invalid JSON before any route sees it, so that no recursive validation, serialization or echo
 * of the input meets unbounded depth. A body that is not JSON is refused saying where
 * (`json-syntax.ts`: line, column and what was expected).
 */
import { LIMITS } from '../exec.ts'
import { nestsDeeperThan } from '../json-depth.ts'
import { jsonSyntaxError } from './json-syntax.ts'

/** Fastify's code of a body its JSON parser refused. */
const INVALID_JSON_BODY = 'FST_ERR_CTP_INVALID_JSON_BODY'

/** `err`, when it is Fastify's refusal of `body` as JSON, said with where `body` stops being JSON. */
export function locatedJsonError(err: Error, body: string): Error {
  if ((err as { code?: unknown }).code !== INVALID_JSON_BODY) return err
  const where = jsonSyntaxError(body)
  if (where === undefined) return err
  return Object.assign(new SyntaxError(where, { cause: err }), { code: INVALID_JSON_BODY, statusCode: 400 })
}

/** A body parser in Fastify's callback form (`app.getDefaultJsonParser(…)`). */
export type JsonBodyParser<R> = (request: R, body: string, done: (err: Error | null, value?: unknown) => void) => void

/**
 * The code of {@link JsonTooDeepError}, in the manner of Fastify's `FST_ERR_CTP_…` codes; the edge answers it as
 * invalid JSON, under the service's own code.
 */
export const JSON_TOO_DEEP = 'SF_EDGE_JSON_TOO_DEEP'

/** A body nested past the depth limit: invalid JSON by the contract (a `SyntaxError`, HTTP 400). */
export class JsonTooDeepError extends SyntaxError {
  /** {@link JSON_TOO_DEEP}. */
  readonly code = JSON_TOO_DEEP
  /** The HTTP status Fastify gives an error without a handler of its own. */
  readonly statusCode = 400

  constructor(maxDepth: number) {
    super(`JSON nested deeper than ${maxDepth} levels`)
    this.name = 'JsonTooDeepError'
  }
}

/** Wraps a JSON body parser so a body nested deeper than `maxDepth` fails with a {@link JsonTooDeepError}. */
export function depthLimited<R>(parse: JsonBodyParser<R>, maxDepth: number): JsonBodyParser<R> {
  return (request, body, done) => {
    parse(request, body, (err, value) => {
      if (err === null && nestsDeeperThan(value, maxDepth)) done(new JsonTooDeepError(maxDepth), undefined)
      else done(err === null ? null : locatedJsonError(err, body), value)
    })
  }
}

/** What {@link installJsonBody} needs of a Fastify instance. */
export interface JsonBodyApp {
  getDefaultJsonParser(onProtoPoisoning: 'error', onConstructorPoisoning: 'error'): JsonBodyParser<never>
  removeContentTypeParser(contentType: string): unknown
  addContentTypeParser(
    contentType: string,
    options: { parseAs: 'string' },
    parser: (request: never, body: string, done: (err: Error | null, value?: unknown) => void) => void
  ): unknown
}

/**
 * Replaces `app`'s application/json parser with the depth-limited one (call on the root instance, before the routes).
 */
export function installJsonBody(app: JsonBodyApp, maxDepth: number = LIMITS.maxJsonDepth): void {
  const parse = depthLimited(app.getDefaultJsonParser('error', 'error'), maxDepth)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body, done)
  })
}
