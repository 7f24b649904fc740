/**
 * The contamination corpus of the `reuse` isolation level: jobs that try to leave something for
 * the next job in their process (a patched function, a setting, a thread, a descriptor, a file,
 * a seeded generator, …), each with its fate: `reused` (the check finds nothing, or what the job
 * changed is the job's own and put back: the same process takes the next job), `retired` (the
 * check, or the watch while it ran, finds what it left: the process retires; `reasons` are the
 * ones the metrics may name), or `forked` (its code names what the check cannot follow: it runs
 * in a fork, and the reuse process never sees it). Whatever the fate, the probe after it must see
 * the interpreter as a fresh process has it (contamination.test.ts).
 */

/** The zygote tiers: a case runs on the one its imports choose, and its probe on the same. */
export type Tier = 'bare' | 'std' | 'sym' | 'sci'

export interface ContaminationCase {
  name: string
  code: string
  fate: 'reused' | 'retired' | 'forked'
  /** `retired`: the reasons its retirement may be counted under. */
  reasons?: string[]
  stdin?: string
}

const retired = (name: string, code: string, ...reasons: string[]): ContaminationCase => ({ name, code, fate: 'retired', reasons })
const reused = (name: string, code: string): ContaminationCase => ({ name, code, fate: 'reused' })
const forked = (name: string, code: string): ContaminationCase => ({ name, code, fate: 'forked' })

export const CASES: ContaminationCase[] = [
  // ── the job's own namespace, output, files and cwd: reset by design ──
  reused('a global and a function left in __main__', 'leak = 1\ndef helper(): return leak\nprint(helper())'),
  reused('print shadowed in __main__', 'print = lambda *a, **k: None\nprint("hidden")'),
  reused('files in the work dir and /tmp', 'open("left.txt", "w").write("x")\nopen("/tmp/left-tmp", "w").write("x")\nimport os\nos.makedirs("/tmp/deep/er")'),
  reused('files in /mnt and /dev/shm', 'open("/mnt/left", "w").write("x")\nopen("/dev/shm/left", "w").write("x")\nimport os\nos.makedirs("/mnt/deep/er")'),
  reused('the working directory changed', 'import os\nos.chdir("/")\nprint(os.getcwd())'),
  { ...reused('stdin half read', 'import sys\nprint(sys.stdin.readline().strip())'), stdin: 'first\nsecond\nthird\n' },
  reused('a generator suspended in a try/finally that prints', 'def g():\n    try: yield 1\n    finally: print("LEAKED FROM FINALLY")\nx = g()\nnext(x)\nprint("suspended")'),
  reused('an unclosed file with buffered data', 'f = open("/tmp/unflushed", "w")\nf.write("data")\nprint("open")'),
  reused('random.seed(1)', 'import random\nrandom.seed(1)\nprint(random.random())'),
  reused('decimal precision of the current context', 'import decimal\ndecimal.getcontext().prec = 3\nprint(decimal.Decimal(1) / 3)'),
  reused('warnings turned into errors', 'import warnings\nwarnings.simplefilter("error")\nprint("strict")'),
  reused('a new regular expression in re\'s cache', 'import re\nprint(bool(re.compile("contamination-[0-9]+").match("contamination-1")))'),
  reused('linecache poisoned for a library file', 'import linecache, json\nlinecache.cache[json.__file__] = (1, None, ["POISONED\\n"], json.__file__)\nprint("poisoned")'),
  reused('a dataclass and a namedtuple made (their code generated and compiled)', 'from dataclasses import dataclass\nfrom collections import namedtuple\n@dataclass\nclass P:\n    x: int\n    y: int = 2\nQ = namedtuple("Q", "a b")\nprint(P(1), Q(1, 2))'),
  reused('sympy lambdify to numpy (its counter moves)', 'import sympy as sp\nx = sp.symbols("x")\nprint(sp.lambdify(x, x**2)(3))'),
  reused('plain names that are also module names', 'code = 3\ndis = 4\nsite = "s"\nprint(code + dis, site)'),
  reused('sympy Dummy symbols made (their counter moves)', 'import sympy\nprint([sympy.Dummy("d%d" % i).dummy_index > 0 for i in range(3)])'),
  // ── module and class state: the check finds it ──
  retired('math.pi written', 'import math\nmath.pi = 3\nprint(math.pi)', 'state'),
  retired('json.dumps replaced through an alias', 'import json\nj = json\nj.dumps = lambda *a, **k: "patched"\nprint(j.dumps(1))', 'state'),
  retired('sympy.factor replaced', 'import sympy\nsympy.factor = lambda e: "patched"\nprint(sympy.factor(1))', 'state'),
  retired('random.seed replaced', 'import random\nrandom.seed = lambda *a: None\nprint("patched")', 'state'),
  retired('a class attribute of the standard library', 'import fractions\nfractions.Fraction.extra = 1\nprint(fractions.Fraction(1, 2).extra)', 'state'),
  retired('an attribute on a library function', 'import json\njson.loads.marker = 1\nprint("marked")', 'state'),
  retired('sys.path extended', 'import sys\nsys.path.insert(0, "/tmp")\nprint(sys.path[0])', 'state'),
  retired('sys.modules entry replaced', 'import sys, json\nsys.modules["json"] = None\nprint("gone")', 'modules', 'state'),
  retired('sys.stdout replaced', 'import sys, io\nsys.stdout = io.StringIO()\nprint("swallowed")', 'state', 'setting'),
  retired('mpmath precision raised', 'import mpmath\nmpmath.mp.dps = 50\nprint(mpmath.mp.dps)', 'state'),
  retired('sympy evaluation turned off globally', 'from sympy.core.parameters import global_parameters\nglobal_parameters.evaluate = False\nprint("off")', 'state'),
  retired('numpy print precision (float repr)', 'import numpy as np\nnp.set_printoptions(precision=2)\nprint(np.array([1 / 3]))', 'setting', 'state'),
  retired('numpy floating-point errors ignored', 'import numpy as np\nnp.seterr(all="ignore")\nprint("quiet")', 'setting', 'state'),
  retired('decimal\'s default context', 'import decimal\ndecimal.DefaultContext.prec = 5\nprint("default")', 'setting'),
  retired('the recursion limit', 'import sys\nsys.setrecursionlimit(150)\nprint(sys.getrecursionlimit())', 'setting'),
  retired('the standard stream reconfigured', 'import sys\nsys.stdout.reconfigure(line_buffering=True)\nprint("line")', 'setting'),
  retired('a module imported that no tier preloads', 'import wave\nprint(wave.WAVE_FORMAT_PCM)', 'import'),
  retired('dynamic code that names what the check cannot follow, through sympify', 'import sympy\nprint(sympy.sympify("__imp" + "ort__(\'os\').getpid() > 0"))', 'taint'),
  retired('a thread object made (its name counter moves)', 'import sympy, threading\nt = threading.Thread(target=print)\nprint(t.name)', 'counter'),
  // ── the process: the check finds it, or the job ends as a forked one ──
  retired('a thread left running', 'import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\nprint("started")', 'taint'),
  retired('a child process left', 'import subprocess\nsubprocess.Popen(["sleep", "30"])\nprint("spawned")', 'taint'),
  retired('a descriptor left open', 'import os\nos.open("/dev/null", os.O_RDONLY)\nprint("fd")', 'descriptors'),
  retired('a signal handler', 'import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\nprint("handler")', 'signal'),
  retired('an alarm', 'import signal\nsignal.alarm(30)\nprint("alarm")', 'signal'),
  retired('an environment variable', 'import os\nos.environ["CONTAMINATION"] = "1"\nprint("env")', 'taint'),
  retired('the umask', 'import os\nos.umask(0)\nprint("umask")', 'umask'),

  // ── what the check cannot see: the code runs forked ──
  forked('builtins.print replaced', 'import builtins\nbuiltins.print = lambda *a, **k: None\nprint("hidden")'),
  forked('ctypes', 'import ctypes\nprint(ctypes.CDLL(None).getpid() > 0)'),
  forked('gc.get_objects', 'import gc\nprint(len(gc.get_objects()) > 0)'),
  forked('sys.settrace', 'import sys\nsys.settrace(lambda *a: None)\nprint("traced")'),
  forked('object.__subclasses__', 'print(len(object.__subclasses__()) > 0)'),
  forked('a frame reached through a traceback', 'import sys\ntry: 1 / 0\nexcept ZeroDivisionError: print(sys.exc_info()[2].tb_frame is not None)'),
  forked('an attribute by computed name', 'import json\nsetattr(json, "dump" + "s", None)\nprint("set")'),
  forked('an ABC registered', 'from collections.abc import Sequence\nSequence.register(dict)\nprint(isinstance({}, Sequence))'),
  forked('a finalizer (__del__)', 'class A:\n    def __del__(self): print("DEL")\nkeep = A()\nprint("made")'),
  forked('an atexit handler (it runs at the end, as in any fork)', 'import atexit\natexit.register(print, "bye")\nprint("registered")'),
  forked('rlimits raised', 'import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0] != 0)')
]
