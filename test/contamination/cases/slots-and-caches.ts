/**
 * Objects the walk of the baseline holds through slots rather than dicts, and objects caches hand
 * out (sympy's cacheit, functools' lru_cache: kept in C, never walked). A job changes such an
 * object by assigning its attribute: an assignment to anything but `self` or `cls` runs forked;
 * one to `self` or `cls` (a method of the job's own class, given a library's object) has the
 * slots put back and the caches emptied after the job.
 */
import { forked, retired, reused, type ContaminationCase } from '../types.ts'

export const SLOTS_AND_CACHES: ContaminationCase[] = [
  forked(
    'a slot of a cached sympy Integer assigned (Integer(77).p = 78: every later Integer(77))',
    'import sympy\nsympy.Integer(77).p = 78\nprint(sympy.Integer(70) + sympy.Integer(7))'
  ),
  forked('a sympy Symbol renamed', 'import sympy\nx = sympy.Symbol("x")\nx.name = "y"\nprint(x)'),
  forked(
    'an attribute deleted from a library object',
    'import fractions\ndel fractions.Fraction.limit_denominator\nprint("gone")'
  ),
  reused(
    "a cached sympy Integer changed through a method of the job's own class (the caches emptied after it)",
    'import sympy\nclass Poke:\n    def set(self, v): self.p = v\nPoke.set(sympy.Integer(77), 78)\nprint(sympy.Integer(70) + sympy.Integer(7))'
  ),
  reused(
    'a cached sympy Rational changed the same way, twice over',
    'import sympy\nclass Poke:\n    def set(self, p, q): self.p, self.q = p, q\nPoke.set(sympy.Rational(3, 4), 5, 6)\nprint(sympy.Rational(3, 4), sympy.Rational(6, 8))'
  ),
  retired(
    "a sympy unit renamed through a method of the job's own class (its attributes are a dict: the check finds it)",
    'from sympy.physics import units\nclass Rename:\n    def set(self, v): self._name = v\nRename.set(units.meter, "furlong")\nprint(units.meter)',
    'state'
  ),
  reused(
    "sympy's caches filled by ordinary work",
    'import sympy\nx = sympy.symbols("x")\nprint(sympy.factor(x**6 - 1), sympy.integrate(x**3 * sympy.exp(x), x))'
  ),
  reused(
    "typing's caches filled (generic aliases)",
    'import typing\nprint(typing.List[int], typing.Dict[str, typing.Tuple[int, ...]])'
  )
]
