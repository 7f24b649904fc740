/**
 * Sandboxes across the fleet, as sessions are (fleet-sessions.ts): a sandbox is made on the least loaded runner that
 * holds sandboxes, and its id names that runner, so every later call goes straight there from any gateway replica.
 * A sandbox's list is every runner's, asked at once. A sandbox whose runner left the fleet or stopped answering is
 * lost (410 `SF_ERR_SESSION_LOST`), never made again elsewhere.
 *
 * The gateway keeps one thing of a sandbox, and only to save a call: whose sandbox a token opens (the owner's key
 * digest, whose quotas its calls take), for a while after the runner said so. The runner checks the token again on
 * every call.
 */
import { createHash } from 'node:crypto'
import {
  decodeSessionId,
  SESSION_LOST,
  type CallContext,
  SESSION_NOT_FOUND,
  type SandboxAnswer,
  type SandboxAuth,
  type SandboxCall,
  type SandboxCreateRequest,
  type SandboxEvent,
  type SandboxInfo,
  type SandboxStreamCall
} from '@sandfleet/protocol'
import { GatewayError, RunnerRefusal } from '../errors.ts'
import type { RunnerSandboxes } from '../runners/runner-client.ts'
import type { RunnerMember, RunnerSet } from '../runners/runner-set.ts'

/** Codes after which `create` tries the next runner. */
const TRY_ANOTHER: ReadonlySet<string> = new Set([
  'SF_ERR_SESSION_LIMIT',
  'SF_ERR_SESSION_DISABLED',
  'SF_ERR_SESSION_HOST'
])

/** How long a token's owner is taken as known (ms), and how many are kept at most. */
const OWNER_TTL_MS = 30_000
const OWNERS_KEPT = 10_000

function lost(message: string): RunnerRefusal {
  return new RunnerRefusal(410, { status: 'invalid_request', error: { code: SESSION_LOST, message } })
}

const digest = (text: string): string => createHash('sha256').update(text).digest('base64url')

/** The fleet's sandboxes as one gateway reaches them; see the module comment. */
export class FleetSandboxes {
  readonly #runners: RunnerSet
  readonly #owners = new Map<string, { owner: string; at: number }>()

  constructor(runners: RunnerSet) {
    this.#runners = runners
  }

  /** Makes a sandbox on the least loaded runner that will hold it; its answer holds its token. */
  async create(request: SandboxCreateRequest, key: string): Promise<SandboxInfo> {
    const tried = new Set<RunnerMember>()
    let last: unknown
    for (let member = this.#runners.pick(); member !== undefined; member = this.#runners.pick(tried)) {
      tried.add(member)
      const sandboxes = member.client.sandboxes
      if (sandboxes === undefined) continue
      try {
        const info = await this.#on(member, () => sandboxes.create(request, key))
        if (info.token !== undefined) this.#remember(info.sandbox_id, info.token, info.owner)
        return info
      } catch (err) {
        last = err
        if (err instanceof RunnerRefusal && TRY_ANOTHER.has(err.code)) continue
        if (err instanceof GatewayError && err.code === 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE') {
          member.up = false
          continue
        }
        throw err
      }
    }
    if (last !== undefined) throw last
    if (tried.size === 0) throw new GatewayError('SF_ERR_GATEWAY_NO_RUNNERS', 'no runner is ready to make a sandbox')
    throw new RunnerRefusal(501, {
      status: 'invalid_request',
      error: { code: 'SF_ERR_SESSION_DISABLED', message: 'no runner of this fleet holds sandboxes' }
    })
  }

  /** Every sandbox of `key`, from every runner that answers. */
  async list(key: string): Promise<SandboxInfo[]> {
    const lists = await Promise.all(
      this.#runners.members.map(async (member) => {
        const sandboxes = member.client.sandboxes
        if (sandboxes === undefined || !member.up) return []
        try {
          return await this.#on(member, () => sandboxes.list(key))
        } catch {
          return []
        }
      })
    )
    return lists.flat()
  }

  /** One call on sandbox `id`, in `context` (a run's: its caller's signal). */
  async call<C extends SandboxCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    context?: CallContext
  ): Promise<SandboxAnswer<C>> {
    const { member, sandboxes } = this.#locate(id)
    return await this.#reach(member, () => sandboxes.call(id, auth, request, context))
  }

  /** A streamed call on sandbox `id` (see the protocol's `RunnerSandboxesApi.stream`). */
  async stream(
    id: string,
    auth: SandboxAuth,
    request: SandboxStreamCall,
    onEvent: (event: SandboxEvent) => void,
    signal?: AbortSignal
  ): Promise<void> {
    const { member, sandboxes } = this.#locate(id)
    // a process may run for hours: not counted in the runner's load estimate, as a call is
    await this.#reach(member, () => sandboxes.stream(id, auth, request, onEvent, signal), false)
  }

  /**
   * The key digest of the owner of sandbox `id`, when `token` opens it: known for a while once the runner said so,
   * else asked (a wrong token, a sandbox gone: the runner's refusal).
   */
  async ownerOf(id: string, token: string): Promise<string> {
    const at = `${id} ${digest(token)}`
    const known = this.#owners.get(at)
    if (known !== undefined && performance.now() - known.at < OWNER_TTL_MS) return known.owner
    const info = await this.call(id, { token }, { op: 'info' })
    this.#remember(id, token, info.owner)
    return info.owner
  }

  #remember(id: string, token: string, owner: string): void {
    if (this.#owners.size >= OWNERS_KEPT) this.#owners.delete(this.#owners.keys().next().value as string)
    this.#owners.set(`${id} ${digest(token)}`, { owner, at: performance.now() })
  }

  #locate(id: string): { member: RunnerMember; sandboxes: RunnerSandboxes } {
    const decoded = decodeSessionId(id)
    if (decoded === undefined)
      throw new RunnerRefusal(404, {
        status: 'invalid_request',
        error: { code: SESSION_NOT_FOUND, message: `${JSON.stringify(id)} is not a sandbox id` }
      })
    const member = this.#runners.byId(decoded.runner)
    const sandboxes = member?.client.sandboxes
    if (member === undefined || sandboxes === undefined)
      throw lost(`sandbox ${id} lost: runner ${decoded.runner} holding it is no longer in the fleet`)
    return { member, sandboxes }
  }

  /** A call on the runner holding a sandbox: no answer at all means the sandbox is lost. */
  async #reach<T>(member: RunnerMember, call: () => Promise<T>, counted = true): Promise<T> {
    try {
      return counted ? await this.#on(member, call) : await call()
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE') {
        member.up = false
        throw lost(`sandbox lost: runner ${member.id} holding it did not answer (${err.message})`)
      }
      throw err
    }
  }

  /** Counts the call in the member's load estimate while it runs. */
  async #on<T>(member: RunnerMember, call: () => Promise<T>): Promise<T> {
    member.outstanding++
    try {
      return await call()
    } finally {
      member.outstanding--
    }
  }
}
