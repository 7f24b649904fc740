/** The `unsafe` driver: executor.py as a plain host process, NO isolation. Only behind an explicit flag. */
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Language, SandboxManifest } from '@sandfleet/protocol'
import type {
  Driver,
  DriverName,
  DriverOptions,
  ExecutorCommand,
  IsolationReport,
  Sandbox
} from '../../sandbox/contract.ts'
import { EXECUTOR_RETIRES, EXECUTOR_SOFT_STOP_MS } from '../../kits/executor/executor-channel.ts'
import { sandboxEnv } from '../../kits/executor/sandbox-env.ts'
import type { SandboxLife } from '../../sandbox/retire-reasons.ts'
import type { ExecutorSettings } from '../process/process-config.ts'
import { ProcessSandbox } from '../process/process-sandbox.ts'
import { SHIPPED_EXECUTOR, SHIPPED_MANIFEST_PROBE, SHIPPED_SESSION_HOST } from '../../kits/executor/python-image.ts'
import { probeManifest } from '../../kits/executor/manifest-probe.ts'

/** Python with no sandbox at all (development only). */
export class UnsafeDriver implements Driver {
  readonly name: DriverName = 'unsafe'
  readonly languages: readonly Language[] = ['python']
  /** The executor's own stop: SIGTERM at `timeout_ms`, SIGKILL `EXECUTOR_SOFT_STOP_MS` later. */
  readonly stopMs = EXECUTOR_SOFT_STOP_MS
  /** Every job end is survived; the executor's reasons. */
  readonly life: SandboxLife = { noun: 'executor', keeps: ['timeout', 'memory', 'killed'], retires: EXECUTOR_RETIRES }
  /** The executor judges a whole program in one job (its `judge` frame). */
  readonly judges = true
  private readonly executor: string
  #manifest: SandboxManifest | undefined

  constructor(private readonly options: DriverOptions<ExecutorSettings>) {
    this.executor = options.config.executorPath !== '' ? options.config.executorPath : SHIPPED_EXECUTOR
  }

  /** Fails with how to install python3 when it is missing; reads its environment (manifest.py) for /v1/info. */
  async check(): Promise<void> {
    const python = this.options.config.pythonPath
    try {
      execFileSync(python, ['--version'], { stdio: 'ignore' })
    } catch {
      throw new Error(`${python} is not runnable; install python3 (Debian: apt-get install python3)`)
    }
    try {
      this.#manifest = await probeManifest(
        {
          file: python,
          args: ['-I', SHIPPED_MANIFEST_PROBE],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' }
        },
        { image: 'host', build: 'host', executor: this.executor }
      )
    } catch (err) {
      this.options.logger.warn({ driver: 'unsafe', err: (err as Error).message }, 'no manifest for /v1/info')
    }
  }

  /** The host Python's version and packages, read by {@link check}. */
  manifest(): SandboxManifest | undefined {
    return this.#manifest
  }

  /** A host-process sandbox, not started. */
  createSandbox(id: string): Sandbox {
    const dir = mkdtempSync(join(tmpdir(), 'sandfleet-unsafe-'))
    return new ProcessSandbox(
      id,
      {
        file: this.options.config.pythonPath,
        args: ['-I', this.executor],
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          LANG: 'C.UTF-8',
          ...sandboxEnv({ workDir: join(dir, 'work'), isolation: this.options.config.isolation })
        }
      },
      this.options.events
    )
  }

  /** The session host as a plain host process (no isolation either). */
  sessionHost(socketDir: string): ExecutorCommand {
    return {
      file: this.options.config.pythonPath,
      args: ['-I', SHIPPED_SESSION_HOST, socketDir],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...sandboxEnv({}) }
    }
  }

  /** Says plainly that nothing is isolated. */
  describe(): IsolationReport {
    return {
      driver: 'unsafe',
      boundary: "NONE: user code runs as a host process with the runner's privileges",
      properties: [
        'no isolation of any kind: network, files and processes of the host are reachable',
        'per-job rlimits and fork per job only'
      ]
    }
  }

  /** Nothing shared to free. */
  async close(): Promise<void> {}
}
