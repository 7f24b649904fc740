/**
 * Tampering tool calls: code that attacks the `reuse` level's process (frames forged on the report
 * pipe it shares with its jobs) or changes what the next job would find (C-level state, module
 * state, an object a cache hands out, through a method of its own class). At `reuse` each is
 * answered `infra_error` (a forged frame: its process is killed) or its own output, and its process
 * retires or puts back what it changed; at `fork` each is harmless. Either way the calls after it
 * must get their right answers: `sandfleet bench step --workload rl-tamper` mixes them into the RL
 * mix (`--hostile-share`, 1 % for issue 38's step) and checks every call's output.
 */
import type { HostileCall } from './hostile-calls.ts'

const forged = (name: string, bytes: string): HostileCall => ({
  name,
  code: `import os\nos.write(3, ${bytes})\nprint("written")`,
  timeoutMs: 10_000,
  status: 'infra_error',
  accept: ['ok']
})
const changes = (name: string, code: string, stdout: string): HostileCall => ({
  name,
  code,
  timeoutMs: 10_000,
  status: 'ok',
  stdout
})

/** The tampering calls. */
export const TAMPER_CALLS: readonly HostileCall[] = [
  forged('an end of its job forged', String.raw`b'\nD{"nonce": "0", "status": 0, "report": null}\n'`),
  forged('a verdict forged', String.raw`b'\nV{"nonce": "0", "retire": null}\n'`),
  forged('a second ready line', String.raw`b'\nR\n'`),
  forged('a line of no kind', String.raw`b'\nhello\n'`),
  forged('a taint, then an end', String.raw`b'\nTforged\n\nD{"nonce": "0", "status": 0, "report": null}\n'`),
  forged('a 2 MiB report line', 'b"x" * (2 << 20)'),
  changes("socket's default timeout (C state)", 'import socket\nsocket.setdefaulttimeout(0.25)\nprint("set")', 'set\n'),
  changes("numpy's error handling (C state)", 'import numpy as np\nnp.seterr(all="ignore")\nprint("quiet")', 'quiet\n'),
  changes(
    "the C locale's numbers",
    'import locale\nlocale.setlocale(locale.LC_NUMERIC, "C.UTF-8")\nprint("locale")',
    'locale\n'
  ),
  changes(
    'a cached sympy Integer changed through a method of its own class',
    'import sympy\nclass Poke:\n    def set(self, v): self.p = v\nPoke.set(sympy.Integer(77), 78)\nprint(sympy.Integer(70) + sympy.Integer(7))',
    '78\n'
  ),
  changes(
    'math.pi changed through a method of its own class',
    'import math\nclass Set:\n    def pi(self): self.pi = 3\nSet.pi(math)\nprint(math.pi)',
    '3\n'
  ),
  changes(
    "decimal's default context changed through self",
    'import decimal\nclass Set:\n    def prec(self): self.prec = 5\nSet.prec(decimal.DefaultContext)\nprint(decimal.DefaultContext.prec)',
    '5\n'
  ),
  changes(
    'sympy.Integer(77).p assigned (runs forked)',
    'import sympy\nsympy.Integer(77).p = 78\nprint(sympy.Integer(70) + sympy.Integer(7))',
    '78\n'
  )
]
