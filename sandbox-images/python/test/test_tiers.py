"""tiers: the cheapest live tier with what a job's code imports."""
from sandfleet_sandbox.tiers import STD, pick_tier, plan_tiers

ALL = {'bare', 'std', 'sym', 'sci'}
LOADED = frozenset({'os', 'sys', 'json', 're', 'math'})


def test_code_that_imports_nothing_or_only_what_bare_has_runs_on_bare():
    assert pick_tier('print(1)', ALL, LOADED) == 'bare'
    assert pick_tier('import os, sys as s\nfrom json import dumps', ALL, LOADED) == 'bare'


def test_the_standard_library_runs_on_std_and_sympy_on_sym():
    assert pick_tier('import fractions', ALL, LOADED) == 'std'
    assert pick_tier('from collections.abc import Mapping', ALL, LOADED) == 'std'
    assert pick_tier('import sympy\nfrom mpmath import mp', ALL, LOADED) == 'sym'
    assert pick_tier('import numpy as np', ALL, LOADED) == 'sci'
    assert pick_tier('import some_unknown_package', ALL, LOADED) == 'sci'


def test_a_dynamic_import_of_a_known_package_counts():
    assert pick_tier('m = __import__("numpy")', ALL, LOADED) == 'sci'
    assert pick_tier('import importlib\nimportlib.import_module("sympy")', ALL, LOADED) == 'sym'


def test_a_tier_that_is_gone_falls_back_to_the_next_that_fits():
    assert pick_tier('import sympy', {'bare', 'std', 'sci'}, LOADED) == 'sci'
    assert pick_tier('import numpy', {'bare', 'std', 'sym'}, LOADED) == 'sym'
    assert pick_tier('import numpy', {'bare', 'std'}, LOADED) == 'std'
    assert pick_tier('import fractions', {'bare'}, LOADED) == 'bare'


def test_the_plan_has_bare_and_std_and_no_sci_that_adds_nothing_to_sym():
    plan = plan_tiers()
    assert plan['bare'] == [] and plan['std'] == list(STD)
    if 'sci' in plan:
        assert not set(plan['sci']) <= set(plan.get('sym', []))
