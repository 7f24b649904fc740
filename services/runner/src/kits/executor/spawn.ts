/**
 * Starting and killing a process that speaks the executor protocol (executor.py, or
 * session_host.py for sessions) from an {@link ExecutorCommand}: the one place that spawns a
 * Python sandbox's process, for the executor sandboxes and the session host alike.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Writable } from 'node:stream'
import type { ExecutorCommand } from '../../sandbox/contract.ts'

/**
 * Starts `command` leading a process group of its own, stdin and stdout piped, stderr as given,
 * and its `fds` bytes (if any) written to its fds 3, 4, … and closed.
 */
export function spawnCommand(command: ExecutorCommand, stderr: 'ignore' | 'inherit'): ChildProcess {
  const fds = command.fds ?? []
  const child = spawn(command.file, command.args, {
    stdio: ['pipe', 'pipe', stderr, ...fds.map(() => 'pipe' as const)],
    env: command.env ?? {},
    detached: true
  })
  // an early exit is the caller's to see
  fds.forEach((bytes, i) => {
    ;(child.stdio[3 + i] as Writable).on('error', () => {}).end(bytes)
  })
  return child
}

/** SIGKILLs the process group `child` leads (spawned `detached`), or the child alone when that fails. */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) {
      process.kill(-child.pid, 'SIGKILL')
      return
    }
  } catch {}
  child.kill('SIGKILL')
}
