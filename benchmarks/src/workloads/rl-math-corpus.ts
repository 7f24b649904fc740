/**
 * A small corpus of math tool calls as an RL policy writes them (rStar2-Agent style: short
 * sympy, numpy and fractions computations that print an answer), each with the status and stdout
 * it must come back with. Most are `ok`; some raise (the model's mistakes: a typo, a division by
 * zero, a shape mismatch); a few run past their deadline. `weight` is how often the RL mix draws
 * it relative to the others (see rl-mix.ts).
 */

/** One tool call of the corpus and what it must answer. */
export interface CorpusCall {
  name: string
  code: string
  /** Expected result status: the code's own (`ok`, `error`, `timeout`). */
  status: 'ok' | 'error' | 'timeout'
  /** Expected stdout (for `error` and `timeout`, what is printed before it stops). */
  stdout: string
  /** Deadline of the call, when it is not the contract's default. */
  timeoutMs?: number
  /** Relative frequency in the RL mix. */
  weight: number
}

const ok = (name: string, code: string, stdout: string, weight = 10): CorpusCall => ({
  name,
  code,
  status: 'ok',
  stdout,
  weight
})
const error = (name: string, code: string, stdout = '', weight = 3): CorpusCall => ({
  name,
  code,
  status: 'error',
  stdout,
  weight
})

/** The corpus: 36 answers, 8 mistakes, 2 runaways. */
export const RL_MATH_CORPUS: readonly CorpusCall[] = [
  ok('fraction sum', 'from fractions import Fraction\nprint(Fraction(3, 4) + Fraction(5, 6))', '19/12\n'),
  ok(
    'fraction harmonic',
    'from fractions import Fraction\ns = sum(Fraction(1, k) for k in range(1, 11))\nprint(s)',
    '7381/2520\n'
  ),
  ok(
    'fraction of a probability',
    'from fractions import Fraction\np = Fraction(4, 52) * Fraction(3, 51)\nprint(p)',
    '1/221\n'
  ),
  ok('gcd and lcm', 'import math\nprint(math.gcd(462, 1071), math.lcm(12, 18, 30))', '21 180\n'),
  ok('binomial', 'import math\nprint(math.comb(20, 7))', '77520\n'),
  ok('factorial digits sum', 'import math\nprint(sum(int(d) for d in str(math.factorial(25))))', '72\n'),
  ok('modular power', 'print(pow(7, 222, 1000))', '49\n'),
  ok(
    'primes below 100',
    'print(sum(p for p in range(2, 100) if all(p % d for d in range(2, int(p**0.5) + 1))))',
    '1060\n'
  ),
  ok('fibonacci', 'a, b = 0, 1\nfor _ in range(50):\n    a, b = b, a + b\nprint(a)', '12586269025\n'),
  ok('digits count', 'print(len(str(2**1000)))', '302\n'),
  ok(
    'sympy factor',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sp.factor(x**4 - 1))",
    '(x - 1)*(x + 1)*(x**2 + 1)\n'
  ),
  ok(
    'sympy expand',
    "import sympy as sp\nx, y = sp.symbols('x y')\nprint(sp.expand((x + y)**3))",
    'x**3 + 3*x**2*y + 3*x*y**2 + y**3\n'
  ),
  ok(
    'sympy solve quadratic',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sorted(sp.solve(x**2 - 5*x + 6, x)))",
    '[2, 3]\n'
  ),
  ok(
    'sympy solve system',
    "import sympy as sp\nx, y = sp.symbols('x y')\ns = sp.solve([x + y - 10, x - y - 2], [x, y])\nprint(s[x], s[y])",
    '6 4\n'
  ),
  ok(
    'sympy integrate',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sp.integrate(x**2 * sp.exp(x), x))",
    '(x**2 - 2*x + 2)*exp(x)\n'
  ),
  ok(
    'sympy definite integral',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sp.integrate(sp.sin(x), (x, 0, sp.pi)))",
    '2\n'
  ),
  ok(
    'sympy derivative',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sp.diff(sp.sin(x) * x**2, x))",
    'x**2*cos(x) + 2*x*sin(x)\n'
  ),
  ok('sympy limit', "import sympy as sp\nx = sp.symbols('x')\nprint(sp.limit(sp.sin(x) / x, x, 0))", '1\n'),
  ok(
    'sympy series sum',
    "import sympy as sp\nk = sp.symbols('k', integer=True, positive=True)\nprint(sp.summation(1 / k**2, (k, 1, sp.oo)))",
    'pi**2/6\n'
  ),
  ok(
    'sympy simplify',
    "import sympy as sp\nx = sp.symbols('x')\nprint(sp.simplify(sp.sin(x)**2 + sp.cos(x)**2))",
    '1\n'
  ),
  ok('sympy rational', 'import sympy as sp\nprint(sp.Rational(1, 3) + sp.Rational(1, 6))', '1/2\n'),
  ok('sympy isprime', 'import sympy as sp\nprint(sp.isprime(2**31 - 1), sp.nextprime(100))', 'True 101\n'),
  ok('sympy factorint', 'import sympy as sp\nprint(sp.factorint(360))', '{2: 3, 3: 2, 5: 1}\n'),
  ok('sympy totient', 'import sympy as sp\nprint(sp.totient(100))', '40\n'),
  ok('sympy nsimplify sqrt', 'import sympy as sp\nprint(sp.sqrt(8) + sp.sqrt(18))', '5*sqrt(2)\n'),
  ok(
    'sympy matrix det',
    'import sympy as sp\nM = sp.Matrix([[2, 1, 0], [1, 3, 1], [0, 1, 4]])\nprint(M.det())',
    '18\n'
  ),
  ok('sympy evalf', 'import sympy as sp\nprint(sp.N(sp.pi, 15))', '3.14159265358979\n'),
  ok('numpy mean', 'import numpy as np\nprint(np.mean([3, 7, 8, 10, 12]))', '8.0\n'),
  ok('numpy dot', 'import numpy as np\nprint(int(np.dot([1, 2, 3], [4, 5, 6])))', '32\n'),
  ok('numpy det', 'import numpy as np\nprint(round(float(np.linalg.det(np.array([[4, 7], [2, 6]]))), 6))', '10.0\n'),
  ok(
    'numpy solve',
    'import numpy as np\nx = np.linalg.solve(np.array([[3, 1], [1, 2]]), np.array([9, 8]))\nprint(x.round(6).tolist())',
    '[2.0, 3.0]\n'
  ),
  ok('numpy cumsum', 'import numpy as np\nprint(np.cumsum(np.arange(1, 6)).tolist())', '[1, 3, 6, 10, 15]\n'),
  ok('numpy std', 'import numpy as np\nprint(round(float(np.std([2, 4, 4, 4, 5, 5, 7, 9])), 6))', '2.0\n'),
  ok(
    'numpy polyroots',
    'import numpy as np\nprint(sorted(np.roots([1, -6, 11, -6]).real.round(6).tolist()))',
    '[1.0, 2.0, 3.0]\n'
  ),
  ok(
    'itertools count',
    'import itertools\nprint(sum(1 for p in itertools.permutations(range(5)) if all(p[i] != i for i in range(5))))',
    '44\n'
  ),
  ok(
    'decimal sqrt',
    'from decimal import Decimal, getcontext\ngetcontext().prec = 20\nprint(Decimal(2).sqrt())',
    '1.4142135623730950488\n'
  ),
  error('name error', "import sympy as sp\nx = sp.symbols('x')\nprint(sp.factor(y**2 - 1))"),
  error('division by zero', 'from fractions import Fraction\nprint(Fraction(1, 0))'),
  error('shape mismatch', 'import numpy as np\nprint(np.dot(np.ones((2, 3)), np.ones((2, 3))))'),
  error('syntax error', 'print(sum(range(10))'),
  error('key error after output', "d = {'a': 1}\nprint(d['a'])\nprint(d['b'])", '1\n'),
  error('assertion', 'answer = 7 * 6\nassert answer == 41, answer'),
  error('exit code', 'import sys\nprint(2 + 2)\nsys.exit(3)', '4\n'),
  error('type error', "print(int('12') + '3')"),
  { name: 'infinite loop', code: 'while True:\n    pass', status: 'timeout', stdout: '', timeoutMs: 300, weight: 0.5 },
  {
    name: 'slow search',
    code: "import itertools\nprint('searching', flush=True)\nfor n in itertools.count():\n    pass",
    status: 'timeout',
    stdout: 'searching\n',
    timeoutMs: 300,
    weight: 0.5
  }
]
