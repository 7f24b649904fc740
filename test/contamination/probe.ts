/**
 * The probe run after each contamination case, on the case's tier: it prints what a job sees of
 * the interpreter and the process (its own namespace, the modules a tier preloads and their
 * settings, the environment, the work dir, /tmp, /mnt and /dev/shm, signals, stdin) and, on its own line, its pid.
 * It imports only what its tier preloads and names nothing `static_taint` refuses (`sys.modules`
 * among them: the check itself compares it), so that it runs in the tier's reuse process and
 * leaves it as it found it.
 */
import type { Tier } from './cases.ts'

const BARE = [
  'import os, sys, json, math, signal, linecache',
  'facts = [sorted(k for k in dir() if not k.startswith("_")), math.pi, json.dumps({"a": [1]}), json.loads("[2]"),',
  '         sys.getrecursionlimit(), sys.path[:3], os.getcwd(), sorted(os.listdir(".")),',
  '         sorted(os.listdir("/tmp")), sorted(os.listdir("/mnt")), sorted(os.listdir("/dev/shm")), sorted(os.environ), sys.stdin.read(), sys.stdout.line_buffering, type(sys.stdout).__name__,',
  '         [str(signal.getsignal(s)).split(" at ")[0] for s in (signal.SIGUSR1, signal.SIGALRM, signal.SIGINT, signal.SIGTERM)],',
  '         signal.alarm(0), len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd")), linecache.getline(json.__file__, 1)]',
  'm = os.umask(0o22); os.umask(m); facts.append(m)'
]

const STD = [
  'import random, decimal, warnings, fractions',
  'import typing',
  'facts += [random.random() != 0.13436424411240122, str(random.seed).split(" at ")[0], decimal.getcontext().prec, str(decimal.DefaultContext), str(typing.List[int]),',
  '          len(warnings.filters), warnings.filters[0][0], fractions.Fraction(1, 2), hasattr(fractions.Fraction, "extra")]'
]

const SYM = [
  'import sympy, mpmath',
  'from sympy.core.parameters import global_parameters',
  'from sympy.physics import units',
  'facts += [str(sympy.factor(sympy.Symbol("x") ** 2 - 1)), mpmath.mp.dps, global_parameters.evaluate, sympy.Dummy("d").dummy_index,',
  '          str(sympy.Integer(70) + sympy.Integer(7)), str(sympy.Rational(6, 8)), str(sympy.Symbol("x")), str(units.meter), hasattr(fractions.Fraction, "limit_denominator")]'
]

const SCI = [
  'import numpy as np',
  'facts += [np.get_printoptions()["precision"], sorted(np.geterr().items()), str(np.array([1 / 3]))]'
]

const LINES: Record<Tier, string[][]> = {
  bare: [BARE],
  std: [BARE, STD],
  sym: [BARE, STD, SYM],
  sci: [BARE, STD, SYM, SCI]
}

/** The probe of `tier`: its facts as one line of JSON, then its pid. */
export function probe(tier: Tier): string {
  return [...LINES[tier].flat(), 'print(json.dumps([str(f) for f in facts]))', 'print(os.getpid())'].join('\n')
}
