/** Module and class state a job changes through their dicts, lists and settings: the check finds it and the process retires. */
import { retired, type ContaminationCase } from '../types.ts'

export const MODULE_STATE: ContaminationCase[] = [
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
  retired('a thread object made (its name counter moves)', 'import sympy, threading\nt = threading.Thread(target=print)\nprint(t.name)', 'counter')
]
