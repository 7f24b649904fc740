/**
 * Module and class state a job changes through their dicts, lists and settings: the check finds it
 * and the process retires. An attribute of a library assigned directly runs forked (the object
 * may be one a cache handed out); assigned through a method of the job's own class (`self`), it
 * runs reused and the check finds it.
 */
import { forked, retired, type ContaminationCase } from '../types.ts'

export const MODULE_STATE: ContaminationCase[] = [
  forked('math.pi written (an attribute of a library assigned)', 'import math\nmath.pi = 3\nprint(math.pi)'),
  forked(
    'json.dumps replaced through an alias (an attribute of a library assigned)',
    'import json\nj = json\nj.dumps = lambda *a, **k: "patched"\nprint(j.dumps(1))'
  ),
  forked(
    'sympy.factor replaced (an attribute of a library assigned)',
    'import sympy\nsympy.factor = lambda e: "patched"\nprint(sympy.factor(1))'
  ),
  forked(
    'random.seed replaced (an attribute of a library assigned)',
    'import random\nrandom.seed = lambda *a: None\nprint("patched")'
  ),
  forked(
    'a class attribute of the standard library (an attribute of a library assigned)',
    'import fractions\nfractions.Fraction.extra = 1\nprint(fractions.Fraction(1, 2).extra)'
  ),
  forked(
    'an attribute on a library function (an attribute of a library assigned)',
    'import json\njson.loads.marker = 1\nprint("marked")'
  ),
  retired('sys.path extended', 'import sys\nsys.path.insert(0, "/tmp")\nprint(sys.path[0])', 'state'),
  forked(
    'sys.modules entry replaced (an attribute of a library assigned)',
    'import sys, json\nsys.modules["json"] = None\nprint("gone")'
  ),
  forked(
    'sys.stdout replaced (an attribute of a library assigned)',
    'import sys, io\nsys.stdout = io.StringIO()\nprint("swallowed")'
  ),
  forked(
    'mpmath precision raised (an attribute of a library assigned)',
    'import mpmath\nmpmath.mp.dps = 50\nprint(mpmath.mp.dps)'
  ),
  forked(
    'sympy evaluation turned off globally (an attribute of a library assigned)',
    'from sympy.core.parameters import global_parameters\nglobal_parameters.evaluate = False\nprint("off")'
  ),
  retired(
    'numpy print precision (float repr)',
    'import numpy as np\nnp.set_printoptions(precision=2)\nprint(np.array([1 / 3]))',
    'setting',
    'state'
  ),
  retired(
    'numpy floating-point errors ignored',
    'import numpy as np\nnp.seterr(all="ignore")\nprint("quiet")',
    'setting',
    'state'
  ),
  forked(
    "decimal's default context (an attribute of a library assigned)",
    'import decimal\ndecimal.DefaultContext.prec = 5\nprint("default")'
  ),
  retired('the recursion limit', 'import sys\nsys.setrecursionlimit(150)\nprint(sys.getrecursionlimit())', 'setting'),
  retired(
    'the standard stream reconfigured',
    'import sys\nsys.stdout.reconfigure(line_buffering=True)\nprint("line")',
    'setting'
  ),
  retired('a module imported that no tier preloads', 'import wave\nprint(wave.WAVE_FORMAT_PCM)', 'import', 'taint'),
  retired(
    'dynamic code that names what the check cannot follow, through sympify',
    'import sympy\nprint(sympy.sympify("__imp" + "ort__(\'os\').getpid() > 0"))',
    'taint'
  ),
  retired(
    'a thread object made (its name counter moves)',
    'import sympy, threading\nt = threading.Thread(target=print)\nprint(t.name)',
    'counter'
  ),
  retired(
    "math.pi written through a method of the job's own class",
    'import math\nclass Set:\n    def pi(self): self.pi = 3\nSet.pi(math)\nprint(math.pi)',
    'state'
  ),
  retired(
    "json.dumps replaced through a method of the job's own class",
    'import json\nclass Set:\n    def dumps(self): self.dumps = lambda *a, **k: "patched"\nSet.dumps(json)\nprint(json.dumps(1))',
    'state'
  ),
  retired(
    'a class attribute of the standard library set through self',
    'import fractions\nclass Set:\n    def extra(self): self.extra = 1\nSet.extra(fractions.Fraction)\nprint(fractions.Fraction(1, 2).extra)',
    'state',
    'taint'
  ),
  retired(
    'sys.stdout replaced through self',
    'import sys, io\nclass Set:\n    def out(self): self.stdout = io.StringIO()\nSet.out(sys)\nprint("swallowed")',
    'state',
    'setting'
  ),
  retired(
    'mpmath precision raised through self',
    'import mpmath\nclass Set:\n    def dps(self): self.dps = 50\nSet.dps(mpmath.mp)\nprint(mpmath.mp.dps)',
    'state'
  ),
  retired(
    'sympy evaluation turned off through self',
    'from sympy.core.parameters import global_parameters\nclass Set:\n    def off(self): self.evaluate = False\nSet.off(global_parameters)\nprint("off")',
    'state'
  ),
  retired(
    "decimal's default context changed through self",
    'import decimal\nclass Set:\n    def prec(self): self.prec = 5\nSet.prec(decimal.DefaultContext)\nprint("default")',
    'setting'
  )
]
