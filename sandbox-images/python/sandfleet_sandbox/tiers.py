"""The zygote tiers (what each preloads) and the choice of one for a job's code.

`bare`: what the executor itself imports; `std`: plus the standard library jobs commonly import;
`sym`: plus sympy and mpmath; `sci`: plus numpy and scipy too.
"""
import re
import sys

# Two scientific tiers: a zygote's size is paid at every job forked from it (page-table entries copied and torn down,
# refcounts written), and numpy and scipy more than double sympy's (benchmarks/RESULTS.md, "Executor").
SYM = ('sympy', 'mpmath')
SCI = ('numpy', 'sympy', 'scipy', 'mpmath')
# The tiers a job that wants the first one can run on, best first: one that preloads what it imports, else a cheaper
# one.
FALLBACK = {
    'bare': ('bare',),
    'std': ('std', 'bare'),
    'sym': ('sym', 'sci', 'std', 'bare'),
    'sci': ('sci', 'sym', 'std', 'bare'),
}
# The standard library a job commonly imports and bare lacks: preloaded in `std`, not in `bare`, where every job would
# pay for them at its fork (benchmarks/RESULTS.md, "Executor").
STD = (
    'random',
    'fractions',
    'decimal',
    'statistics',
    'typing',
    'dataclasses',
    'datetime',
    'heapq',
    'bisect',
    'string',
    'copy',
    'itertools',
    'functools',
    'collections',
    'math',
    'operator',
    'array',
    'struct',
    'hashlib',
    'textwrap',
    'pprint',
)
STDLIB = frozenset(sys.stdlib_module_names) | {'', '__main__'}
STDLIB_AND_SYM = STDLIB | frozenset(SYM)
# `from M import x` (group 1: M; its `import` is consumed, so x is not taken for a module) or `import M [as a], ...`
# (group 2)
IMPORT_RE = re.compile(
    r'\bfrom\s+([\w.]+)\s+import\b|\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)'
)


def installed(name):
    """Whether package `name` can be imported here (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def plan_tiers():
    """Each tier this sandbox has and what it preloads: `sym` when sympy or mpmath is installed, `sci` when it would
    hold
    something `sym` lacks."""
    planned = {
        'bare': [],
        'std': list(STD),
        'sym': [n for n in SYM if installed(n)],
        'sci': [n for n in SCI if installed(n)],
    }
    if not planned['sym']:
        del planned['sym']
    if set(planned['sci']) <= set(planned.get('sym', [])):
        del planned['sci']
    return planned


def pick_tier(code, tiers, loaded):
    """The cheapest of the live `tiers` with what `code` imports: `bare` when all of it is in `loaded` (the top-level
    modules the bare zygote has), `std` when it is the standard library, `sym` when it is that and sympy or mpmath,
    `sci` otherwise (a tier that is not there falls back as FALLBACK says)."""
    if 'import' not in code:
        return 'bare'
    names = set()
    for source, group in IMPORT_RE.findall(code):
        if source:
            names.add(source.split('.')[0])
        else:
            names.update(part.split()[0].split('.')[0] for part in group.split(',') if part.strip())
    if '__import__' in code or 'import_module' in code:
        names.update(n for n in SCI if n in code)
    if 'lambdify' in code:
        names.add('numpy')  # sympy's lambdify imports numpy when it is installed
    want = 'bare' if names <= loaded else 'std' if names <= STDLIB else 'sym' if names <= STDLIB_AND_SYM else 'sci'
    for name in FALLBACK[want]:
        if name in tiers:
            return name
    return 'bare'
