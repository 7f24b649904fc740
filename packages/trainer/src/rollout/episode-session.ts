/**
 * {@link EpisodeSession}: a {@link ToolExecutor} that keeps Python state across one episode's
 * turns in a fleet session (`POST /v1/sessions`), opened at the episode's first tool call (many
 * episodes never call a tool) and closed when the episode ends. A session that cannot be opened
 * or is lost answers the call as `infra_error` (the fleet's fault, left out of p_err); the next
 * call opens a fresh session, so the model sees its variables gone.
 */
import { failedResult, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import type { ToolExecutor } from './tool-step.ts'

/** What opening a session needs of the client (`SandfleetClient` fits). */
export interface SessionOpener {
  createSession(
    options?: { ttl_s?: number; memory_mb?: number },
    call?: { signal?: AbortSignal }
  ): Promise<ToolExecutor & { close(): Promise<void> }>
}

/** One episode's session. */
export class EpisodeSession implements ToolExecutor {
  private session: (ToolExecutor & { close(): Promise<void> }) | undefined
  /** Sessions opened so far (more than one after a loss). */
  opened = 0

  /** A session opened lazily through `client`. */
  constructor(
    private readonly client: SessionOpener,
    private readonly options: { ttl_s?: number; memory_mb?: number } = {}
  ) {}

  /** Runs one call in the episode's session. */
  async execute(req: ExecRequest, options: { signal?: AbortSignal } = {}): Promise<ExecResult> {
    if (this.session === undefined) {
      try {
        this.session = await this.client.createSession(this.options, options)
        this.opened++
      } catch (err) {
        if (options.signal?.aborted) throw err
        const e = err as { code?: string; message?: string }
        return failedResult('infra_error', e.code ?? 'Error', e.message ?? String(err))
      }
    }
    const { session_id: _ignored, ...rest } = req
    try {
      return await this.session.execute(rest, options)
    } catch (err) {
      if (options.signal?.aborted) throw err
      const lost = this.session
      this.session = undefined
      void lost.close().catch(() => {})
      const e = err as { code?: string; message?: string }
      return failedResult('infra_error', e.code ?? 'Error', e.message ?? String(err))
    }
  }

  /** Closes the session if one is open; safe to call twice. */
  async close(): Promise<void> {
    const s = this.session
    this.session = undefined
    if (s !== undefined) await s.close().catch(() => {})
  }
}
