/**
 * What the gateway and the runner both need of HTTP, written once: the edge (the JSON body
 * parser with its depth limit, the error shape and the mapping of Fastify's errors to a
 * service's registry by their code), the caller-abort signal, the NDJSON writer and reader of a
 * streamed batch, the error registry's shape, and the methods each path takes (404 or 405). Node only
 * (`node:stream`); kept out of the package's main entry, which is the contract alone.
 *
 * @example
 * ```ts
 * import { NdjsonWriter, callerSignal } from '@sandfleet/protocol/http'
 * const signal = callerSignal(reply.raw)
 * const lines = new NdjsonWriter()
 * void runner.executeBatch(requests, (index, result) => { lines.push({ index, result }) }, { signal }).then(() => {
 * lines.end() }) return reply.type(NDJSON).send(lines.stream)
 * ```
 */
export * from './caller-signal.ts'
export * from './ndjson-writer.ts'
export * from './ndjson-reader.ts'
export * from './error-registry.ts'
export * from './route-methods.ts'
export * from './json-body.ts'
export * from './schema-problem.ts'
export * from './error-shape.ts'
export * from './thrown.ts'
