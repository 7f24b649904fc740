#!/usr/bin/env python3
"""The extension modules each zygote tier preloads, with what a job could change in them: the list that
docs/reuse-census.md classifies, made again for a new interpreter or package version.

    python3 sandbox-images/python/census_list.py [TIER ...]          # each tier's extension modules, those it adds
    python3 sandbox-images/python/census_list.py --check [TIER ...]  # exits 1 naming what the census does not name

A tier is listed from a fresh interpreter that imports the executor's package and warms the tier as its zygote does
(zygote_process.warm), run by the Python this script runs under (the sandbox's: Debian's /usr/bin/python3). An extension
module is one built into the interpreter or loaded from a shared object. For each: its callables (functions and types,
private names too), and its other attributes that are neither constants nor what the baseline's walk watches (dicts,
lists, sets, modules): objects of C types whose state a job might change in place (f2py's common blocks among them).

`--check` names each module, each callable that looks like a setter (SETTER, or EXTRA_SETTERS) and each object that
the census (docs/reuse-census.md) does not name in backquotes; a name there ending in `*` stands for every name it
begins. Standard library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CENSUS = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'docs', 'reuse-census.md')
TIERS = ('bare', 'std', 'sym', 'sci')
# A callable whose name says it changes something: set_x, _set_x, setx, register, reset, seed, ...
SETTER = re.compile(
    r'(?:^|_)(?:set|reset|register|unregister|enable|disable|install|seed|bind|override|add_?doc|add_newdoc|'
    r'start|stop|interrupt|acquire|release|freeze|unfreeze|clear|putenv|unsetenv|init)'
)
EXTRA_SETTERS = frozenset(
    (
        'tzset',
        'textdomain',
        'umask',
        'nice',
        'chdir',
        'fchdir',
        'chroot',
        'stack_size',
        'fork',
        'forkpty',
        'fork_exec',
        'login_tty',
        'tcsetpgrp',
        'siginterrupt',
        'signal',
        'alarm',
        'pthread_sigmask',
        'addaudithook',
        'settrace',
        'setprofile',
        'kill',
        'killpg',
        'system',
    )
)

ONE = r'''
import json
import os
import sys
import types
sys.path.insert(0, sys.argv[1])
from sandfleet_sandbox import controller, zygote_process as zygote
zygote.warm(sys.argv[2])
SUFFIXES = tuple(__import__('importlib.machinery').machinery.EXTENSION_SUFFIXES)
PLAIN = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range, type(sys.intern('').startswith),
         type(__import__('re').compile('')), type(Ellipsis), type(NotImplemented), types.MappingProxyType,
         dict, list, set, types.SimpleNamespace, types.ModuleType)
out = {}
for name, m in sorted(sys.modules.items()):
    if m is None: continue
    where = getattr(m, '__file__', None)
    if name not in sys.builtin_module_names and not (isinstance(where, str) and where.endswith(SUFFIXES)): continue
    callables, objects = [], {}
    for k in sorted(m.__dict__):
        if k.startswith('__') and k.endswith('__'): continue
        v = m.__dict__[k]
        # an f2py common block (Fortran globals, its fields writable) is callable as f2py's routines are, but is state
        common = type(v).__name__ == 'fortran' and '(' not in (v.__doc__ or '').split('\n')[0]
        if callable(v) and not common: callables.append(k)
        elif not isinstance(v, PLAIN) and type(v).__name__ != 'PyCapsule': objects[k] = type(v).__name__
    out[name] = {'file': where or 'built in', 'callables': callables, 'objects': objects}
print(json.dumps(out))
'''


def tier_modules(tier):
    """Extension module name → {file, callables, objects}, as the zygote of `tier` has them after warming."""
    with tempfile.TemporaryDirectory(prefix='census-') as work:
        # as the process backend's sandbox has it (process-driver.ts), and the executor's thread caps
        env = {
            'PATH': '/usr/bin:/bin',
            'LANG': 'C.UTF-8',
            'HOME': work,
            'OPENBLAS_NUM_THREADS': '1',
            'OMP_NUM_THREADS': '1',
            'SANDFLEET_NO_HUGEPAGES': '1',
            'SANDFLEET_WORKDIR': work,
        }
        r = subprocess.run(
            [sys.executable, '-I', '-W', 'ignore', '-c', ONE, HERE, tier],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    if r.returncode != 0:
        sys.exit('%s: %s' % (tier, r.stderr.strip()[-2000:]))
    return json.loads(r.stdout)


def by_tier(tiers):
    """Each tier in `tiers` (in TIERS order) → the extension modules it has that the tier listed before it lacks."""
    seen, out = set(), {}
    for tier in (t for t in TIERS if t in tiers):
        mods = tier_modules(tier)
        out[tier] = {n: v for n, v in mods.items() if n not in seen}
        seen |= mods.keys()
    return out


def named(doc):
    """The names the census names in backquotes: exact ones, and the beginnings of those ending in `*`."""
    names = set(re.findall(r'`([^`\s]+)`', doc))
    exact = set()
    for n in names:
        exact.update([n, n.rsplit('.', 1)[-1]])  # `numpy.random.mtrand` names the module; `np.seterr` names seterr
    return exact, tuple(n[:-1] for n in exact if n.endswith('*') and len(n) > 1)


def missing(listing, doc):
    """What the listing holds that `doc` does not name: (tier, module, what) for each module, setter-like callable and
    object."""
    exact, prefixes = named(doc)

    def covered(n):
        return n in exact or bool(prefixes) and n.startswith(prefixes)

    out = []
    for tier, mods in listing.items():
        for name, m in mods.items():
            if not covered(name):
                out.append((tier, name, 'the module'))
            for c in m['callables']:
                if (SETTER.search(c) or c in EXTRA_SETTERS) and not covered(c):
                    out.append((tier, name, c))
            for o in m['objects']:
                if not covered(o):
                    out.append((tier, name, o))
    return out


def main(argv):
    check = '--check' in argv
    tiers = [a for a in argv if a != '--check'] or list(TIERS)
    bad = [t for t in tiers if t not in TIERS]
    if bad:
        sys.exit('unknown tier %s (tiers: %s)' % (', '.join(bad), ' '.join(TIERS)))
    listing = by_tier(tiers)
    if check:
        with open(CENSUS, encoding='utf-8') as f:
            gaps = missing(listing, f.read())
        for tier, module, what in gaps:
            print('%s: %s: %s is not in the census' % (tier, module, what))
        return 1 if gaps else 0
    for tier, mods in listing.items():
        print('# %s: %d extension modules it adds' % (tier, len(mods)))
        for name, m in mods.items():
            print('%s  (%s)' % (name, m['file']))
            if m['callables']:
                print('    callables: ' + ' '.join(m['callables']))
            if m['objects']:
                print('    objects: ' + ' '.join('%s (%s)' % kv for kv in m['objects'].items()))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
