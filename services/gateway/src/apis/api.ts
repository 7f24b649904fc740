/**
 * What an API is to the gateway: a Fastify plugin over {@link ApiContext}, registered once by
 * app.ts from the list in apis/index.ts. Its folder holds all that is its own (routes, shapes,
 * mappings, schemas); each of its routes that runs code declares its calls (`config.calls`,
 * pipeline/route-calls.ts), so the one pipeline (pipeline/pipeline.ts) holds it to the limits,
 * the tenant's quota and admission as it holds every other API. Adding an API is a folder and
 * its line in the list; its OpenAPI tags come with it.
 */
import type { FastifyPluginAsync } from 'fastify'
import type { GatewayConfig } from '../config.ts'
import type { Router } from '../runners/router.ts'
import type { RunnerSet } from '../runners/runner-set.ts'
import type { RouteSchemas } from '../schemas.ts'
import type { FleetSessions } from '../sessions/fleet-sessions.ts'
import type { Tenant } from '../tenants/tenants.ts'

/** What the gateway hands every API: its settings and the fleet's path (routing, retries, sessions). */
export interface ApiContext {
  config: GatewayConfig
  /** Calls and batches to the least loaded runner, retried within their deadline. */
  router: Router
  /** The runners and their reported load. */
  runners: RunnerSet
  /** Sessions, routed by the runner their ids name. */
  sessions: FleetSessions
  /** The native routes' schemas (the protocol's). */
  schemas: RouteSchemas
  /** The API keys' tenants (none: no auth), for an API whose routes authenticate otherwise (`config.ownAuth`). */
  tenants: readonly Tenant[]
}

/** A heading of the OpenAPI document, under which an API's operations are listed. */
export interface ApiTag {
  name: string
  description: string
}

/** An API of the gateway: its routes, and how the OpenAPI document lists them. */
export interface Api {
  /** Registers its routes (app.ts, once). */
  routes: FastifyPluginAsync<ApiContext>
  /** The tags its operations carry, with their descriptions, in the document's order. */
  tags: readonly ApiTag[]
  /** Whose API it speaks, as the document's description names it ("SandboxFusion's"); none for the native API. */
  imitates?: string
}
