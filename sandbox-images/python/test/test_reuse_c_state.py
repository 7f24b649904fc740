"""census: each C-level setting c_state reads moves its reading when a job changes it, and nothing else does; code that
names a setter of REFUSED_NAMES is refused by static_taint (it runs forked) while ordinary code is not; the census
(docs/reuse-census.md) names every extension module, setter and object each tier preloads, as census_list.py finds
them."""
import json
import os
import subprocess
import sys

import pytest

import census_list
from sandfleet_sandbox.reuse_c_state import READ, REFUSED_NAMES
from sandfleet_sandbox.reuse_denylist import static_taint

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A change of each reading of reuse_c_state.READ, as a job makes it.
CHANGES = {
    '_abc.get_cache_token': 'from collections.abc import Sized\nSized.register(int)',
    '_locale.textdomain': 'import _locale\n_locale.textdomain("census-test")',
    '_socket.getdefaulttimeout': 'import socket\nsocket.setdefaulttimeout(0.25)',
    'numpy.core._multiarray_umath._get_madvise_hugepage': (
        'from numpy.core.multiarray import _get_madvise_hugepage as get, _set_madvise_hugepage as set_\nset_(not get())'
    ),
    'numpy.core._multiarray_umath._get_promotion_state': 'import numpy as np\nnp._set_promotion_state("weak")',
    'numpy.random.mtrand.get_bit_generator': 'import numpy as np\nnp.random.set_bit_generator(np.random.PCG64(1))',
    'scipy.special._ufuncs.geterr': 'import scipy.special as sc\nsc.seterr(all="raise")',
}

# In one interpreter with every module READ names loaded: which readings each change moved (by index in READ), and
# which a job that changes nothing moved.
MOVED = r'''
import json
import sys
sys.path.insert(0, sys.argv[1])
import numpy
import numpy.random
import scipy.special
import socket
from sandfleet_sandbox.reuse_c_state import c_state
moved = {}
for name, change in [('nothing', 'pass')] + sorted(json.loads(sys.argv[2]).items()):
    before = c_state()
    exec(change, {})
    after = c_state()
    moved[name] = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
print(json.dumps(moved))
'''


def reading(module, getter):
    return '%s.%s' % (module, getter)


@pytest.fixture(scope='module')
def moved():
    out = subprocess.run(
        [sys.executable, '-I', '-W', 'ignore', '-c', MOVED, HERE, json.dumps(CHANGES)],
        capture_output=True,
        text=True,
        timeout=120,
        env={'PATH': '/usr/bin:/bin', 'OPENBLAS_NUM_THREADS': '1', 'LANG': 'C.UTF-8'},
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_reading_has_a_change_here():
    assert sorted(CHANGES) == sorted(reading(m, g) for m, g, _ in READ)


@pytest.mark.parametrize('i', range(len(READ)), ids=[reading(m, g) for m, g, _ in READ])
def test_changing_a_setting_c_state_reads_moves_its_reading_and_no_other(moved, i):
    assert moved[reading(*READ[i][:2])] == [i]


def test_c_state_is_the_same_when_nothing_changed(moved):
    assert moved['nothing'] == []


@pytest.mark.parametrize('name', REFUSED_NAMES)
def test_code_that_names_a_refused_setter_runs_forked(name):
    # a private name is refused in an import list already; the name itself is refused wherever it appears
    assert static_taint('from somewhere import %s\n%s(0)' % (name, name)) in (name, 'import ' + name[:2])
    assert static_taint('import somewhere\nsomewhere.%s(0)' % name) is not None
    assert static_taint('%s(0)' % name) == name


@pytest.mark.parametrize(
    'code',
    [
        'import socket\nprint(socket.getdefaulttimeout())',
        'import numpy as np\nnp.seterr(all="ignore")\nnp.random.seed(0)\nprint(np.geterr(), np.getbufsize())',
        'import scipy.special as sc\nwith sc.errstate(all="ignore"): print(sc.gamma(0))',
        'import os\nprint(os.get_blocking(1), os.get_inheritable(1))',
        'import locale\nprint(locale.getlocale(), "é".encode("utf-8", "replace"))',
        'from collections.abc import Sequence\nprint(isinstance([], Sequence))',
        'import subprocess\nprint(subprocess.run(["true"]).returncode)',  # forked for its child anyway: the audit hook
    ],
)
def test_ordinary_code_naming_no_refused_setter_may_run_in_a_reuse_process(code):
    assert static_taint(code) is None


def test_a_name_ending_in_a_star_in_the_census_stands_for_every_name_it_begins():
    listing = {'sci': {'m': {'callables': ['set_a', 'set_b', 'get_c', 'reset'], 'objects': {'common': 'fortran'}}}}
    assert census_list.missing(listing, '`m`: `set_*`, `reset`') == [('sci', 'm', 'common')]
    assert census_list.missing(listing, '`m` `set_a`') == [
        ('sci', 'm', 'set_b'),
        ('sci', 'm', 'reset'),
        ('sci', 'm', 'common'),
    ]
    assert census_list.missing(listing, '`m` `set_a` `m.*` `set_b` `common`') == [
        ('sci', 'm', 'reset')
    ]  # `m.*` names no callable


def test_the_census_names_every_extension_module_setter_and_object_of_each_tier():
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, 'census_list.py'), '--check'], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout + out.stderr
