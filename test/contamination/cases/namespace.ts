/**
 * The job's own namespace, output, files and working directory: reset by design, so the same process takes the next
 * job.
 */
import { reused, type ContaminationCase } from '../types.ts'

export const NAMESPACE: ContaminationCase[] = [
  reused('a global and a function left in __main__', 'leak = 1\ndef helper(): return leak\nprint(helper())'),
  reused('print shadowed in __main__', 'print = lambda *a, **k: None\nprint("hidden")'),
  reused(
    'files in the work dir and /tmp',
    'open("left.txt", "w").write("x")\nopen("/tmp/left-tmp", "w").write("x")\nimport os\nos.makedirs("/tmp/deep/er")'
  ),
  reused(
    'files in /mnt and /dev/shm',
    'open("/mnt/left", "w").write("x")\nopen("/dev/shm/left", "w").write("x")\nimport os\nos.makedirs("/mnt/deep/er")'
  ),
  reused('the working directory changed', 'import os\nos.chdir("/")\nprint(os.getcwd())'),
  { ...reused('stdin half read', 'import sys\nprint(sys.stdin.readline().strip())'), stdin: 'first\nsecond\nthird\n' },
  reused(
    'a generator suspended in a try/finally that prints',
    'def g():\n    try: yield 1\n    finally: print("LEAKED FROM FINALLY")\nx = g()\nnext(x)\nprint("suspended")'
  ),
  reused('an unclosed file with buffered data', 'f = open("/tmp/unflushed", "w")\nf.write("data")\nprint("open")'),
  reused('random.seed(1)', 'import random\nrandom.seed(1)\nprint(random.random())'),
  reused(
    'decimal precision of the current context',
    'import decimal\ndecimal.getcontext().prec = 3\nprint(decimal.Decimal(1) / 3)'
  ),
  reused('warnings turned into errors', 'import warnings\nwarnings.simplefilter("error")\nprint("strict")'),
  reused(
    "a new regular expression in re's cache",
    'import re\nprint(bool(re.compile("contamination-[0-9]+").match("contamination-1")))'
  ),
  reused(
    'linecache poisoned for a library file',
    'import linecache, json\nlinecache.cache[json.__file__] = (1, None, ["POISONED\\n"], json.__file__)\nprint("poisoned")'
  ),
  reused(
    'a dataclass and a namedtuple made (their code generated and compiled)',
    'from dataclasses import dataclass\nfrom collections import namedtuple\n@dataclass\nclass P:\n    x: int\n    y: int = 2\nQ = namedtuple("Q", "a b")\nprint(P(1), Q(1, 2))'
  ),
  reused(
    'sympy lambdify to numpy (its counter moves)',
    'import sympy as sp\nx = sp.symbols("x")\nprint(sp.lambdify(x, x**2)(3))'
  ),
  reused('plain names that are also module names', 'code = 3\ndis = 4\nsite = "s"\nprint(code + dis, site)'),
  reused(
    'sympy Dummy symbols made (their counter moves)',
    'import sympy\nprint([sympy.Dummy("d%d" % i).dummy_index > 0 for i in range(3)])'
  )
]
