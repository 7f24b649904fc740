/**
 * Sandboxes across the fleet, as sessions are (held-on-runner.ts): a sandbox is made on the least loaded runner that
 * holds sandboxes, and its id names that runner, so every later call goes straight there from any gateway replica.
 * A sandbox's list is every runner's, asked at once. A sandbox whose runner left the fleet or stopped answering is
 * lost (410 `SF_ERR_SESSION_LOST`, the fleet's fault), never made again elsewhere.
 *
 * The gateway keeps one thing of a sandbox, and only to save a call: whose sandbox a token opens (the owner's key
 * digest, whose quotas its calls take), for a while after the runner said so. The runner checks the token again on
 * every call.
 */
import { createHash } from 'node:crypto'
import {
  type CallContext,
  type SandboxAnswer,
  type SandboxAuth,
  type SandboxCall,
  type SandboxCreateRequest,
  type SandboxInfo,
  type SandboxStreamCall,
  type SandboxStreamEvent
} from '@sandfleet/protocol'
import type { RunnerSandboxes } from '../runners/runner-client.ts'
import type { RunnerMember, RunnerSet } from '../runners/runner-set.ts'
import { locate, onMember, openOnSome, reach } from './held-on-runner.ts'

const sandboxesOf = (member: RunnerMember): RunnerSandboxes | undefined => member.client.sandboxes

/** How long a token's owner is taken as known (ms), and how many are kept at most. */
const OWNER_TTL_MS = 30_000
const OWNERS_KEPT = 10_000

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
    const info = await openOnSome(this.#runners, 'sandbox', sandboxesOf, (sandboxes) => sandboxes.create(request, key))
    if (info.token !== undefined) this.#remember(info.sandbox_id, info.token, info.owner)
    return info
  }

  /** Every sandbox of `key`, from every runner that answers. */
  async list(key: string): Promise<SandboxInfo[]> {
    const lists = await Promise.all(
      this.#runners.members.map(async (member) => {
        const sandboxes = member.client.sandboxes
        if (sandboxes === undefined || !member.up) return []
        try {
          return await onMember(member, () => sandboxes.list(key))
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
    const { member, part } = locate(this.#runners, 'sandbox', id, sandboxesOf)
    return await reach(member, 'sandbox', () => part.call(id, auth, request, context))
  }

  /** A streamed call on sandbox `id` (see the protocol's `RunnerSandboxesApi.stream`). */
  async stream<C extends SandboxStreamCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    onEvent: (event: SandboxStreamEvent<C>) => void,
    signal?: AbortSignal
  ): Promise<void> {
    const { member, part } = locate(this.#runners, 'sandbox', id, sandboxesOf)
    // a process may run for hours: not counted in the runner's load estimate; a run is, as a call is
    const counted = request.op === 'run'
    await reach(member, 'sandbox', () => part.stream(id, auth, request, onEvent, signal), counted)
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
}
