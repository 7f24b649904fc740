/**
 * The pipes a reuse process shares with its jobs: the report pipe (fd 3, where it says a job ended
 * and what its check found) and the job pipe (fd 4). The controller holds every line to the
 * protocol and reads the process from outside: a line out of order, of no kind, with another
 * nonce or too long kills the process (the job is answered infra_error); a descriptor of its own
 * closed or replaced taints it.
 */
import { forked, retired, violated, type ContaminationCase } from '../types.ts'

const write = (bytes: string): string => `import os\nos.write(3, ${bytes})\nprint("written")`

export const REPORT_PIPE: ContaminationCase[] = [
  violated(
    'an end of its job forged, with another nonce',
    write(String.raw`b'\nD{"nonce": "0", "status": 0, "report": null}\n'`)
  ),
  violated('a verdict forged before its end', write(String.raw`b'\nV{"nonce": "0", "retire": null}\n'`)),
  violated('a second ready line', write(String.raw`b'\nR\n'`)),
  violated('a line of no kind the protocol has', write(String.raw`b'\nhello\n'`)),
  violated('a report line of 2 MiB', write('b"x" * (2 << 20)')),
  violated(
    "a taint written by the job, then an end (only a fork's end follows a taint)",
    write(String.raw`b'\nTforged\n\nD{"nonce": "0", "status": 0, "report": null}\n'`)
  ),
  violated(
    'a taint written by the job itself (its process then reports an end, which no taint is followed by)',
    write(String.raw`b'\nTforged\n'`)
  ),
  retired(
    "the report pipe replaced by dup2 (its taint goes to the job's stdout: the process ends with its job)",
    'import os\nos.dup2(1, 3)\nprint("dup")',
    'taint',
    'exit'
  ),
  retired('the job pipe closed', 'import os\nos.close(4)\nprint("closed")', 'taint'),
  forked('the job pipe made non-blocking', 'import os\nos.set_blocking(4, False)\nprint("non-blocking")')
]
