"""The reuse level's pieces on their own: what code may run in a reuse process, the dict tags the check relies on, and a
baseline's check in a process of its own (each difference found, nothing found when nothing changed)."""
import os
import subprocess
import sys

import pytest

from sandfleet_sandbox.reuse_process import same, tags_work
from sandfleet_sandbox.reuse_denylist import assigns_attributes, static_taint

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize(
    'code',
    [
        'print(1 + 1)',
        'import sympy\nx = sympy.Symbol("x")\nprint(sympy.factor(x**4 - 1))',
        'class Node:\n    def __init__(self, v):\n        self._v = v\n        self.next = None\n'
        '    def __repr__(self): return "N(%r)" % self._v',
        'class B(Exception):\n    def __init__(self, m):\n        super().__init__(m)\n        self._m = m',
        'if __name__ == "__main__":\n    print(__file__)',
        'from collections import namedtuple\nP = namedtuple("P", "x y")\nprint(P(1, 2))',
        'import numpy as np\nprint(np.arange(4) @ np.arange(4))',
        'import random, decimal\nrandom.seed(3)\ndecimal.getcontext().prec = 5\nprint(decimal.Decimal(1) / 7)',
        'code = 3\ndis = abs(2 - 5)\nsite = "a"\nfp = 1\nprint(code + dis + fp, site)',  # module names as plain names
        'from collections import Counter\nimport sympy.core\nprint(Counter("aab"))',
    ],
)
def test_ordinary_code_may_run_in_a_reuse_process(code):
    assert static_taint(code) is None


@pytest.mark.parametrize(
    'code, why',
    [
        ('import ctypes', 'ctypes'),
        ('import gc\ngc.get_objects()', 'import gc'),
        ('import os, ctypes.util', 'ctypes'),
        ('from importlib import import_module', 'importlib'),
        # modules the check cannot follow, reached without importing them
        ('import sys\nc = sys.modules["ct" + "ypes"]', 'modules'),
        ('from sys import modules', 'modules'),
        ('from numpy import ctypeslib', 'ctypeslib'),
        ('import numpy as np\np.arange(3).ctypes.data', 'ctypes'),
        ('from numpy.lib.stride_tricks import as_strided', 'stride_tricks'),
        # the callers' frames, walked by the standard library
        (
            'import traceback\ntraceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True)',
            'StackSummary',
        ),
        ('import traceback\nprint(traceback.format_stack())', 'format_stack'),
        # an attribute of another object than self or cls assigned or deleted: the object may be a library's, or one a
        # cache handed out (sympy.Integer(77) is the cached Integer(77) of every later job)
        ('import sympy\nsympy.Integer(77).p = 78', '.p ='),
        ('import math\nmath.pi = 3', '.pi ='),
        ('import mpmath\nmpmath.mp.dps += 10', '.dps +='),
        ('import json\ndel json.dumps', 'del json.dumps'),
        ('getattr(obj, name)', 'getattr'),
        ('print(object.__subclasses__())', '__subclasses__'),
        ('x = ().__class__', '__class__'),
        ('import sys\nsys._getframe(1)', '._g'),
        ('import re\nre._cache.clear()', '._c'),
        ('try: 1/0\nexcept Exception as e: e.__traceback__', '__traceback__'),
        ('import sys\nf = sys.exc_info()[2].tb_frame', 'tb_frame'),
        ('exec("print(1)")', 'exec'),
        ('import resource', 'import resource'),
        ('import builtins', 'import builtins'),
        ('from collections.abc import Sequence\nSequence.register(dict)', 'register'),
        ('import sympy\nsympy.init_printing()', 'init_printing'),
        ('class A:\n    def __del__(self): pass', '__del__'),
    ],
)
def test_code_that_reaches_what_the_check_cannot_see_runs_forked(code, why):
    assert static_taint(code) == why


@pytest.mark.parametrize(
    'code, assigns',
    [
        ('class P:\n    def __init__(self, x): self.x = x\nprint(P(1).x)', True),
        ('class C:\n    n = 0\n    @classmethod\n    def bump(cls): cls.n += 1', True),
        ('import decimal\ndecimal.getcontext().prec = 50\nprint(decimal.Decimal(1) / 3)', False),
        ('x = 1\nprint(x.real == 1, x.imag <= 0)', False),
    ],
)
def test_attributes_of_self_run_reused_and_empty_the_caches_after(code, assigns):
    assert static_taint(code) is None
    assert assigns_attributes(code) is assigns


def test_this_interpreter_moves_a_dict_version_tag_on_each_change():
    assert tags_work()


def test_same_compares_by_identity_but_equal_numbers_and_strings():
    big, obj = 10**30, object()
    snap = {'a': big, 'b': obj, 'c': 'text'}
    assert same({'a': 10**30, 'b': obj, 'c': 'te' + 'xt'}, snap)
    assert not same({'a': big, 'b': object(), 'c': 'text'}, snap)
    assert not same({'a': big, 'b': obj}, snap)
    assert not same({'a': big, 'b': obj, 'c': 'text', 'd': 1}, snap)


CHECK = '''
import json
import os
import sys
sys.path.insert(0, %r)
from sandfleet_sandbox import job_process as job, reuse_process as reuse
change = sys.argv[1]
main = job.fresh_main()
base = reuse.Baseline().adopt()
refs = sys.getrefcount(main)
def verdict():
    base.put_back()
    return base.check(main, refs)
found = [verdict()]
exec(change, {})
found.append(verdict())
print(json.dumps(found))
'''


@pytest.mark.parametrize(
    'change, what',
    [
        ('pass', None),
        ('import json\njson.loads = str', 'state'),
        ('import json\njson.dumps.marker = 1', 'state'),
        ('import os\nos.open("/dev/null", os.O_RDONLY)', 'descriptors'),
        (
            'import os\nos.environ["SANDFLEET_LEAK"] = "1"',
            'state',
        ),  # os.environ's dict (putenv itself taints: reuse_process.Watch)
        ('import os\nos.umask(0)', 'umask'),
        ('import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)', 'signal'),
        ('import signal\nsignal.alarm(60)', 'signal'),
        ('import sys\nsys.setrecursionlimit(123)', 'setting'),
        ('import fractions', 'import'),
        ('import sys\nsys.path.append("/nowhere")', None),  # a list that only grew is cut back
        ('import sys\nsys.path[0] = "/nowhere"', 'state'),
        ('import re\nre.compile("a pattern of this test")', None),
        ('import linecache\nlinecache.cache["/x.py"] = (1, None, ["evil\\n"], "/x.py")', None),
    ],
)
def test_a_baseline_check_finds_each_change_and_nothing_else(change, what):
    out = subprocess.run(
        [sys.executable, '-I', '-c', CHECK % HERE, change],
        capture_output=True,
        text=True,
        timeout=60,
        env={'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': '/tmp', 'OPENBLAS_NUM_THREADS': '1'},
    )
    assert out.returncode == 0, out.stderr
    before, after = __import__('json').loads(out.stdout)
    assert before is None
    assert (after and after[0]) == what, after


PUT_BACK = '''
import functools
import json
import sys
import types
sys.path.insert(0, %r)
class Point:
    __slots__ = ('x', 'y')
m = types.ModuleType('put_back_probe')
m.origin = Point(); m.origin.x = 0; m.origin.y = 0
m._cache, m.registry = {'warm': 1}, {}
m.square = functools.lru_cache(maxsize=None)(lambda x: x * x)
sys.modules[m.__name__] = m
from sandfleet_sandbox import job_process as job, reuse_process as reuse
main = job.fresh_main()
base = reuse.Baseline().adopt()
refs = sys.getrefcount(main)
def verdict(assigned=False):
    base.put_back(assigned)
    return base.check(main, refs)
out = {'before': verdict()}
m.origin.x = 3                   # a slot of a watched object
m._cache['poisoned'] = 2         # a dict held as a cache
m.square(4)
out.update(after=verdict(assigned=True), origin=[m.origin.x, m.origin.y], cache=m._cache,
           square=m.square.cache_info().currsize)
m.registry['x'] = 1              # a dict that is not a cache
out['registry'] = verdict()
print(json.dumps(out))
'''


def test_slots_and_caches_are_put_back_and_other_dicts_checked():
    out = subprocess.run(
        [sys.executable, '-I', '-c', PUT_BACK % HERE],
        capture_output=True,
        text=True,
        timeout=120,
        env={'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': '/tmp', 'OPENBLAS_NUM_THREADS': '1'},
    )
    assert out.returncode == 0, out.stderr
    found = __import__('json').loads(out.stdout)
    assert found['before'] is None and found['after'] is None, found
    assert found['origin'] == [0, 0], 'a slot is put back as a fork would find it'
    assert found['cache'] == {'warm': 1}, 'a dict held as a cache is put back'
    assert found['square'] == 0, 'a C cache is emptied'
    assert found['registry'][0] == 'state', 'a dict that is not a cache is checked'
