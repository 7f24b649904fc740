/**
 * One error shape at the edge of every service: each non-2xx answer is an {@link ErrorBody} with
 * a code of the service's registry, whether it comes from the body parser, schema validation,
 * the router (404, 405, a URL it cannot take), a route's {@link RegisteredError} or an
 * unexpected throw. What Fastify raises is told apart by its error's `code` (the table
 * {@link FASTIFY_FAULTS}), never by its message; the service names which of its codes answers
 * each kind of fault ({@link EdgeCodes}).
 *
 * @example
 * ```ts
 * const edge = { registry: RUNNER_ERRORS, codes: RUNNER_EDGE_CODES, service: 'runner', maxBodyBytes }
 * const app = Fastify({ bodyLimit: maxBodyBytes, frameworkErrors: frameworkErrorHandler(edge) })
 * installJsonBody(app)
 * installErrorShape(app, edge)
 * ```
 */
import type { ErrorBody } from '../errors.ts'
import { RegisteredError, type ErrorRegistry } from './error-registry.ts'
import { JSON_TOO_DEEP } from './json-body.ts'
import { RouteMethods } from './route-methods.ts'
import { schemaProblem, type SchemaError } from './schema-problem.ts'

/** A kind of fault the edge answers before or around a route. */
export type EdgeFault =
  'invalidRequest' | 'invalidJson' | 'bodyTooLarge' | 'unsupportedMedia' | 'notFound' | 'methodNotAllowed' | 'internal'

/** The service's registry code that answers each {@link EdgeFault}. */
export type EdgeCodes<Code extends string = string> = Readonly<Record<EdgeFault, Code>>

/**
 * The codes of the errors Fastify raises while it takes a request (its `lib/errors.js`), and the fault each is; the
 * depth-limited parser's {@link JSON_TOO_DEEP} too.
 */
export const FASTIFY_FAULTS: Readonly<Record<string, EdgeFault>> = Object.freeze({
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalidJson',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalidJson',
  [JSON_TOO_DEEP]: 'invalidJson',
  FST_ERR_CTP_BODY_TOO_LARGE: 'bodyTooLarge',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupportedMedia',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalidRequest',
  FST_ERR_VALIDATION: 'invalidRequest',
  FST_ERR_BAD_URL: 'invalidRequest',
  FST_ERR_INVALID_URL: 'invalidRequest',
  FST_ERR_MAX_PARAM_LENGTH: 'invalidRequest',
  FST_ERR_ASYNC_CONSTRAINT: 'invalidRequest',
  FST_ERR_NOT_FOUND: 'notFound'
})

/** How a service answers at its edge. */
export interface EdgeOptions<Code extends string = string> {
  /** The service's error registry. */
  readonly registry: ErrorRegistry<Code>
  /** Which of its codes answers each fault. */
  readonly codes: EdgeCodes<Code>
  /** The service as an answer names it (`gateway`, `runner`). */
  readonly service: string
  /** The service's body limit, given in the answer to a body over it. */
  readonly maxBodyBytes: number
  /** A refusal of the service's own answered as it is (the gateway's forwarded runner refusals), checked first. */
  readonly passThrough?: (err: unknown) => { readonly statusCode: number; readonly body: ErrorBody } | undefined
  /** Told the code of each error answered (the gateway counts them). */
  readonly onAnswer?: (code: string) => void
}

/** The fault `err` is, by its code; else a 4xx is the request's and anything else the service's. */
export function faultOf(err: unknown): EdgeFault {
  const { code, statusCode } = (err ?? {}) as { code?: unknown; statusCode?: unknown }
  if (typeof code === 'string' && Object.hasOwn(FASTIFY_FAULTS, code)) return FASTIFY_FAULTS[code]
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return 'invalidRequest'
  return 'internal'
}

/**
 * `err` as an error of the service's registry: a {@link RegisteredError} (of any registry) is kept, any other is mapped
 * by {@link faultOf}.
 */
export function edgeError<Code extends string>(err: unknown, options: EdgeOptions<Code>): RegisteredError {
  if (err instanceof RegisteredError) return err
  const { registry, codes } = options
  const e = (err ?? {}) as { message?: unknown; validation?: SchemaError[]; validationContext?: string }
  const fault = faultOf(err)
  const message = typeof e.message === 'string' ? e.message : String(err)
  switch (fault) {
    case 'invalidJson':
      return new RegisteredError(registry, codes.invalidJson, `request body is not valid JSON: ${message}`, {
        cause: err
      })
    case 'bodyTooLarge':
      return new RegisteredError(
        registry,
        codes.bodyTooLarge,
        `request body is larger than ${options.maxBodyBytes} bytes, this ${options.service}'s maxBodyBytes (--max-body-bytes)`,
        { cause: err }
      )
    case 'unsupportedMedia':
      return new RegisteredError(registry, codes.unsupportedMedia, 'request body must be application/json', {
        cause: err
      })
    case 'internal':
      return new RegisteredError(registry, codes.internal, 'internal error', { cause: err })
  }
  if (Array.isArray(e.validation)) {
    const problem = schemaProblem(e.validation, e.validationContext ?? 'body')
    return new RegisteredError(registry, codes.invalidRequest, problem.message, { cause: err, field: problem.field })
  }
  return new RegisteredError(registry, codes[fault], message, { cause: err })
}

/** What the handlers use of a Fastify reply. */
export interface EdgeReply {
  code(statusCode: number): EdgeReply
  header(name: string, value: string): EdgeReply
  type(contentType: string): EdgeReply
  send(payload?: unknown): EdgeReply
}

/** What the handlers use of a Fastify request. */
export interface EdgeRequest {
  readonly method: string
  readonly url: string
  readonly log: { error(details: object, message: string): void }
}

/** What {@link installErrorShape} needs of a Fastify instance. */
export interface ErrorShapeApp {
  addHook(
    name: 'onRoute',
    hook: (route: { method: string | string[]; url: string; constraints?: Record<string, unknown> }) => void
  ): unknown
  setSchemaErrorFormatter(formatter: (errors: SchemaError[], dataVar: string) => Error): unknown
  setErrorHandler(handler: (err: Error, request: EdgeRequest, reply: EdgeReply) => void): unknown
  setNotFoundHandler(handler: (request: EdgeRequest, reply: EdgeReply) => void): unknown
}

/** Sends `body` with `statusCode`, and tells `onAnswer` its code. */
function answer(
  reply: EdgeReply,
  statusCode: number,
  body: ErrorBody,
  onAnswer: ((code: string) => void) | undefined
): void {
  onAnswer?.(body.error.code)
  void reply.code(statusCode).type('application/json').send(body)
}

/**
 * Fastify's `frameworkErrors` option: a URL the router cannot take (a bad percent-escape, a
 * parameter past its length) is a 400 ErrorBody naming `url`, not Fastify's own shape.
 */
export function frameworkErrorHandler<Code extends string>(
  options: Pick<EdgeOptions<Code>, 'registry' | 'codes'>
): (err: Error, request: unknown, reply: EdgeReply) => void {
  return (err, _request, reply) => {
    const error = new RegisteredError(options.registry, options.codes.invalidRequest, err.message, {
      cause: err,
      field: 'url'
    })
    answer(reply, error.statusCode, error.toBody(), undefined)
  }
}

/**
 * Installs on `app` (the root instance, before the routes) the schema error formatter, the
 * error handler and the not-found handler: a path no route has is a 404, a path that takes other
 * methods a 405 whose `Allow` header lists them. An internal error is logged with the request.
 */
export function installErrorShape<Code extends string>(app: ErrorShapeApp, options: EdgeOptions<Code>): void {
  const { registry, codes, onAnswer } = options
  const methods = new RouteMethods()
  app.addHook('onRoute', (route) => {
    // a route only a header's value reaches (a router constraint) gives its path no methods for other requests
    if (route.constraints === undefined || Object.keys(route.constraints).length === 0)
      methods.add(route.method, route.url)
  })
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const problem = schemaProblem(errors, dataVar)
    return new RegisteredError(registry, codes.invalidRequest, problem.message, { field: problem.field })
  })
  app.setErrorHandler((err, request, reply) => {
    const passed = options.passThrough?.(err)
    if (passed !== undefined) {
      answer(reply, passed.statusCode, passed.body, onAnswer)
      return
    }
    const error = edgeError(err, options)
    if (error.code === codes.internal) request.log.error({ err }, `${options.service} request failed`)
    answer(reply, error.statusCode, error.toBody(), onAnswer)
  })
  app.setNotFoundHandler((request, reply) => {
    // a path that takes this very method was missed for another reason (a header a route is constrained to): 404
    const allowed = methods.allowed(request.url)
    const allow = allowed.includes(request.method) ? [] : allowed
    const error =
      allow.length === 0
        ? new RegisteredError(registry, codes.notFound, `no route ${request.method} ${request.url}`)
        : new RegisteredError(
            registry,
            codes.methodNotAllowed,
            `${request.url.split('?', 1)[0]} does not take ${request.method}; it takes ${allow.join(', ')}`
          )
    if (allow.length > 0) void reply.header('allow', allow.join(', '))
    answer(reply, error.statusCode, error.toBody(), onAnswer)
  })
}
