/**
 * A held-out set of hard answer pairs for the math answer checker (`answersMatch`, `mathReward`
 * of `@sandfleet/trainer`), kept apart from its tests: benchmarks/src/answer-agreement.ts prints
 * how often the checker agrees with these labels. Each label is what a careful grader would say,
 * with the reason; a pair whose candidate is a whole response (`response: true`) is judged by
 * `mathReward`, which finds the answer in it. {@link HELD_OUT_PAIRS} was written before the
 * checker's equation, ±, inequality and several-box handling; {@link HELD_OUT_PAIRS_B} after it,
 * and reported as it first ran. Neither is tuned on.
 */

/** One labelled pair. */
export interface AnswerPair {
  kind:
    | 'interval'
    | 'set'
    | 'unit'
    | 'equation'
    | 'pm'
    | 'matrix'
    | 'thousands'
    | 'number'
    | 'tuple'
    | 'choice'
    | 'complex'
    | 'expression'
    | 'boxes'
    | 'inequality'
  candidate: string
  reference: string
  equal: boolean
  why: string
  /** The candidate is a model's response: the answer is extracted from it first. */
  response?: boolean
}

const p = (
  kind: AnswerPair['kind'],
  candidate: string,
  reference: string,
  equal: boolean,
  why: string,
  response?: true
): AnswerPair =>
  response ? { kind, candidate, reference, equal, why, response } : { kind, candidate, reference, equal, why }

/** The held-out pairs. */
export const HELD_OUT_PAIRS: readonly AnswerPair[] = Object.freeze([
  p('interval', '(2, \\infty)', '(2,\\infty)', true, 'the same interval, spaced differently'),
  p('interval', '\\left[-3, 5\\right]', '[-3,5]', true, 'sizing commands do not change an interval'),
  p('interval', '(-\\infty, -1] \\cup [1, \\infty)', '(-\\infty,-1]\\cup[1,\\infty)', true, 'the same union'),
  p('interval', '[-1, 1]', '(-1, 1)', false, 'closed is not open: the endpoints differ'),
  p('interval', '(0, \\frac{1}{2}]', '(0, 0.5]', true, 'equal endpoints written two ways, same brackets'),
  p('interval', '[3, 7)', '[3,7]', false, '7 is in one and not the other'),
  p('interval', 'x \\in (1, 4)', '(1,4)', true, '"x ∈" names the variable only'),
  p('interval', '(1, 3)', '(1, 3]', false, 'the right endpoint differs'),
  p('set', '\\{-2, 3\\}', '\\{3, -2\\}', true, 'sets are unordered'),
  p('set', '\\{1, 2, 3\\}', '\\{1, 2, 4\\}', false, 'different elements'),
  p('set', '\\{\\frac{1}{2}, 2\\}', '\\{0.5, 2\\}', true, 'the same elements written two ways'),
  p('set', '\\{\\}', '\\emptyset', true, 'both are the empty set'),
  p('set', '\\{2\\}', '2', true, 'the one solution, as a set or bare'),
  p('unit', '15\\text{ m}', '15', true, 'a unit after the number'),
  p('unit', '3 \\text{ hours}', '3', true, 'a unit after the number'),
  p('unit', '12\\,\\text{cm}^2', '12', true, 'a squared unit after the number'),
  p('unit', '4.5 \\text{ kg}', '4.5', true, 'a unit after the number'),
  p('unit', '100 \\text{ mph}', '100', true, 'a unit the checker may not list'),
  p('unit', '5\\text{ cm}', '50', false, 'a unit does not rescale the number'),
  p('unit', '\\$ 12.50', '12.5', true, 'a dollar sign and a trailing zero'),
  p('unit', '25\\%', '25', true, 'the percent sign, as the reference omits it'),
  p('unit', '7 \\text{ dollars}', '7.00', true, 'a unit word and trailing zeros'),
  p('equation', '2x - y + 1 = 0', 'y = 2x+1', true, 'the same line, all terms on one side'),
  p('equation', '2y = 4x + 2', 'y = 2x + 1', true, 'both sides doubled'),
  p('equation', 'y = 2x - 1', 'y = 2x + 1', false, 'parallel lines, not the same'),
  p('equation', 'x^2 + y^2 = 25', 'x^2+y^2-25=0', true, 'the same circle'),
  p('equation', '3x + 6y = 12', 'x + 2y = 4', true, 'three times the reference'),
  p('equation', 'x + 2y = 4', '2x + y = 4', false, 'different lines'),
  p('equation', 'y = -\\frac{1}{2}x + 3', 'x + 2y - 6 = 0', true, 'slope-intercept and general form of one line'),
  p('equation', 'y = x^2', 'y = x^3', false, 'different curves'),
  p('equation', 'x = 4', '4', true, 'the value named by its variable'),
  p('equation', 'a = -3', '-3', true, 'the value named by its variable'),
  p('equation', 'y = 3x', '3x', true, 'the expression named by the function'),
  p('equation', '\\frac{x^2}{4} + \\frac{y^2}{9} = 1', '9x^2 + 4y^2 = 36', true, 'the same ellipse, times 36'),
  p('equation', 'y - 2 = 3(x - 1)', 'y = 3x - 1', true, 'point-slope and slope-intercept forms of one line'),
  p('equation', 'x^2 = 4', 'x = 2', false, 'x² = 4 also has −2: not a multiple'),
  p('equation', 'x = 2', 'x = 2.0', true, 'the same value'),
  p('pm', '\\pm 3', '3, -3', true, '± names both'),
  p('pm', '-3, 3', '\\pm 3', true, 'both, listed'),
  p('pm', '1 \\pm \\sqrt{2}', '1+\\sqrt{2}, 1-\\sqrt{2}', true, '± names both'),
  p('pm', 'x = \\pm 2', '2, -2', true, '± after the variable'),
  p('pm', '\\pm 2', '2', false, 'two answers for one'),
  p('pm', '2 \\pm i', '2+i, 2-i', true, 'conjugate roots'),
  p(
    'pm',
    '\\frac{-1 \\pm \\sqrt{5}}{2}',
    '\\frac{-1+\\sqrt5}{2}, \\frac{-1-\\sqrt5}{2}',
    true,
    'the quadratic formula written out'
  ),
  p('pm', '\\pm\\frac{1}{2}', '\\frac{1}{2}, -\\frac{1}{2}', true, '± before a fraction'),
  p('pm', '3 \\pm 1', '2, 4', true, '3 + 1 and 3 − 1'),
  p('pm', '\\pm 4', '4, -3', false, '−4 is not −3'),
  p(
    'matrix',
    '\\begin{pmatrix} 2 & 0 \\\\ 0 & 2 \\end{pmatrix}',
    '\\begin{pmatrix}2&0\\\\0&2\\end{pmatrix}',
    true,
    'spacing only'
  ),
  p(
    'matrix',
    '\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}',
    '\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}',
    true,
    'brackets or parentheses, the same matrix'
  ),
  p(
    'matrix',
    '\\begin{pmatrix} \\frac{1}{2} \\\\ 1 \\end{pmatrix}',
    '\\begin{pmatrix} 0.5 \\\\ 1 \\end{pmatrix}',
    true,
    'equal entries written two ways'
  ),
  p(
    'matrix',
    '\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}',
    '\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}',
    false,
    'the transpose'
  ),
  p(
    'matrix',
    '\\begin{pmatrix} -1 \\\\ 2 \\\\ 0 \\end{pmatrix}',
    '\\begin{pmatrix} -1 \\\\ 2 \\end{pmatrix}',
    false,
    'different sizes'
  ),
  p(
    'matrix',
    '\\begin{pmatrix} 2 \\\\ 4 \\end{pmatrix}',
    '\\begin{pmatrix} 1+1 \\\\ 2^2 \\end{pmatrix}',
    true,
    'entries equal in value'
  ),
  p('thousands', '1,234,567', '1234567', true, 'thousands separators'),
  p('thousands', '12{,}500', '12500', true, 'LaTeX thousands separator'),
  p('thousands', '1\\,000', '1000', true, 'a thin space as separator'),
  p('thousands', '3,000.5', '3000.5', true, 'separators and a decimal'),
  p('thousands', '1,000', '1', false, 'a thousand is not one'),
  p('thousands', '10,000', '100000', false, 'ten thousand is not a hundred thousand'),
  p('number', '\\frac{\\sqrt{3}}{3}', '\\frac{1}{\\sqrt{3}}', true, 'rationalised denominator'),
  p('number', '\\sqrt{50}', '5\\sqrt{2}', true, 'simplified radical'),
  p('number', '\\frac{7}{3}', '2\\frac{1}{3}', true, 'a mixed number'),
  p('number', '0.25', '\\frac{1}{4}', true, 'decimal and fraction'),
  p('number', '1.5', '\\frac{3}{2}', true, 'decimal and fraction'),
  p('number', '\\frac{22}{7}', '\\pi', false, 'an approximation of π is not π'),
  p('number', 'e^2', '7.389', false, 'a rounded value is not e²'),
  p('number', '\\dfrac{10}{4}', '\\frac{5}{2}', true, 'an unreduced fraction'),
  p('number', '2^{-1}', '0.5', true, 'a negative power'),
  p('number', '\\log_{3} 9', '2', true, 'a logarithm evaluated'),
  p('number', '\\binom{5}{2}', '10', true, 'a binomial coefficient evaluated'),
  p('number', '5!', '120', true, 'a factorial evaluated'),
  p('number', '\\cos\\frac{\\pi}{3}', '\\frac12', true, 'a cosine evaluated'),
  p('number', '3 \\times 10^{5}', '300000', true, 'scientific notation'),
  p('number', '1.2 \\cdot 10^{-3}', '0.0012', true, 'scientific notation with a dot'),
  p('number', '90^{\\circ}', '90', true, 'degrees'),
  p('number', '45°', '45', true, 'the degree sign'),
  p('tuple', '(3, -1)', '(3,-1)', true, 'the same point'),
  p('tuple', '(-1, 3)', '(3, -1)', false, 'coordinates are ordered'),
  p(
    'tuple',
    '\\left( \\frac{1}{2}, \\frac{\\sqrt{3}}{2} \\right)',
    '(0.5, \\frac{\\sqrt3}{2})',
    true,
    'equal coordinates written two ways'
  ),
  p('tuple', '(1, 2, 3)', '(1, 2)', false, 'different lengths'),
  p('choice', '\\text{(D)}', 'D', true, 'a choice letter in text'),
  p('choice', '\\textbf{(A)}\\ 12', 'A', true, 'the letter with its value'),
  p('choice', '\\text{no}', 'No', true, 'a word answer, any case'),
  p('choice', 'B', 'C', false, 'different choices'),
  p('complex', '3 + 4i', '4i + 3', true, 'terms reordered'),
  p('complex', 'i', '-i', false, 'conjugates differ'),
  p('complex', '\\sqrt{-4}', '2i', true, 'the principal root'),
  p('expression', '\\frac{x+1}{x^2-1}', '\\frac{1}{x-1}', true, 'a common factor cancelled'),
  p('expression', 'x(x+2)', 'x^2 + 2x', true, 'expanded'),
  p('expression', '2\\sin x\\cos x', '\\sin 2x', true, 'the double-angle identity'),
  p('expression', '(x+1)^2', 'x^2+1', false, 'the middle term is missing'),
  p('expression', '\\ln(e^3)', '3', true, 'a logarithm evaluated'),
  p('expression', 'a^2 - b^2', '(a-b)(a+b)', true, 'factored'),
  p('boxes', 'So $x=\\boxed{2}$ or $x=\\boxed{5}$.', '2, 5', true, 'two roots, each boxed', true),
  p(
    'boxes',
    'The roots are \\boxed{-1} and \\boxed{4}.',
    '4, -1',
    true,
    'two roots, each boxed, in another order',
    true
  ),
  p('boxes', 'First \\boxed{3}; the answer is \\boxed{7}.', '7', true, 'one answer: the last box', true),
  p('boxes', 'We get \\boxed{2} and \\boxed{6}.', '2, 5', false, 'one of the two roots is wrong', true),
  p(
    'boxes',
    '<answer>x = \\boxed{1} or x = \\boxed{-1}</answer>',
    '\\pm 1',
    true,
    'both roots boxed in the answer block',
    true
  ),
  p('boxes', 'Thus \\boxed{2}.', '2, 5', false, 'one root of two', true),
  p(
    'boxes',
    'An intermediate \\boxed{10}. Solutions: \\boxed{2}, \\boxed{5}',
    '2, 5',
    true,
    'the last two boxes are the two roots',
    true
  ),
  p('inequality', 'x < 2', '(-\\infty, 2)', true, 'an inequality and its interval'),
  p('inequality', 'x \\geq 3', '[3, \\infty)', true, 'an inequality and its interval'),
  p('inequality', '-1 < x \\le 4', '(-1, 4]', true, 'a double inequality and its interval'),
  p('inequality', 'x > 2', 'x \\ge 2', false, '2 is in one and not the other')
])

/** The second held-out batch, written after the checker's changes. */
export const HELD_OUT_PAIRS_B: readonly AnswerPair[] = Object.freeze([
  p('equation', 'y=-x+4', 'x+y=4', true, 'one line in two forms'),
  p('equation', 'x - 3 = 0', 'x = 3', true, 'the same equation, moved to one side'),
  p('equation', 'x = 3', 'x - 3 = 0', true, 'the same equation, the other way round'),
  p('equation', 'y = \\frac{1}{2}(x+4)', 'x - 2y + 4 = 0', true, 'one line in two forms'),
  p('equation', '(x-1)^2 + (y+2)^2 = 9', 'x^2 - 2x + y^2 + 4y - 4 = 0', true, 'a circle expanded'),
  p('equation', 'y = 2x + 3', 'y = 3 + 2x', true, 'terms reordered'),
  p('equation', 'y=\\sqrt{x}', 'y^2 = x', false, 'y² = x also holds for negative y'),
  p('equation', 'x^2 + y^2 = 4', 'x^2 + y^2 = 2', false, 'circles of different radii'),
  p('pm', '\\pm \\frac{\\sqrt{2}}{2}', '\\frac{\\sqrt2}{2}, -\\frac{\\sqrt2}{2}', true, '± names both'),
  p('pm', 'x = \\pm\\sqrt{5}', '\\sqrt5, -\\sqrt5', true, '± after the variable'),
  p('pm', '\\pm 6', '6, -6', true, '± names both'),
  p('pm', '5 \\pm 2\\sqrt{3}', '5 - 2\\sqrt3, 5 + 2\\sqrt3', true, 'both, in the other order'),
  p('pm', '\\pm 3', '\\pm 4', false, 'different magnitudes'),
  p(
    'pm',
    'x = \\frac{3 \\pm \\sqrt{5}}{2}',
    '\\frac{3+\\sqrt5}{2}, \\frac{3-\\sqrt5}{2}',
    true,
    'the quadratic formula written out'
  ),
  p('interval', '(0, 1]', '(0,1]', true, 'spacing'),
  p('interval', '(-5, 5)', '(-5, 5]', false, '5 is in one only'),
  p('interval', '[2, 3] \\cup [5, 6]', '[2,3]\\cup[5,6]', true, 'the same union'),
  p('interval', '(-\\infty, \\infty)', '\\mathbb{R}', true, 'every real number'),
  p('inequality', 'x \\geq -2', '[-2, \\infty)', true, 'an inequality and its interval'),
  p('inequality', '-3 \\le x \\le 3', '[-3, 3]', true, 'a double inequality and its interval'),
  p('inequality', 'x < -3', '(-\\infty, -3)', true, 'an inequality and its interval'),
  p('inequality', 'x \\ge 0', '(0, \\infty)', false, '0 is in one only'),
  p('set', '\\{0\\}', '0', true, 'a set of one solution and the solution'),
  p('set', '\\{1, -1\\}', '-1, 1', true, 'a set and a list of the same'),
  p('set', '\\{a, b\\}', '\\{b, a\\}', true, 'sets are unordered'),
  p('set', '\\{2, 4, 6\\}', '\\{2, 4\\}', false, 'an element too many'),
  p('unit', '6 \\text{ units}', '6', true, 'a unit word'),
  p('unit', '14 \\text{ square units}', '14', true, 'a square unit'),
  p('unit', '2.5 \\text{ hrs}', '2.5', true, 'an abbreviated unit'),
  p('unit', '30 \\text{ seconds}', '0.5', false, 'the number differs, whatever the unit'),
  p('unit', '75\\%', '75', true, 'the percent sign'),
  p('matrix', '\\begin{pmatrix} 3 \\\\ -2 \\end{pmatrix}', '\\begin{pmatrix}3\\\\-2\\end{pmatrix}', true, 'spacing'),
  p(
    'matrix',
    '\\begin{pmatrix} 1 & 1 \\\\ 0 & 1 \\end{pmatrix}',
    '\\begin{pmatrix} 1 & 0 \\\\ 1 & 1 \\end{pmatrix}',
    false,
    'the transpose'
  ),
  p(
    'matrix',
    '\\begin{pmatrix} 0.5 & 0 \\\\ 0 & 0.5 \\end{pmatrix}',
    '\\begin{pmatrix} \\frac12 & 0 \\\\ 0 & \\frac12 \\end{pmatrix}',
    true,
    'entries written two ways'
  ),
  p(
    'matrix',
    '\\begin{bmatrix} 4 \\\\ 5 \\\\ 6 \\end{bmatrix}',
    '\\begin{pmatrix} 4 \\\\ 5 \\\\ 6 \\end{pmatrix}',
    true,
    'brackets or parentheses'
  ),
  p('thousands', '100,000', '100000', true, 'a separator'),
  p('thousands', '9{,}999', '9999', true, 'the LaTeX separator'),
  p('thousands', '1,000,001', '1000001', true, 'two separators'),
  p('thousands', '4,096', '4069', false, 'digits swapped'),
  p('number', '\\frac{9}{12}', '0.75', true, 'an unreduced fraction'),
  p('number', '\\frac{1}{\\sqrt{2}}', '0.7071', false, 'a rounded value'),
  p('number', '\\sqrt{2}\\cdot\\sqrt{8}', '4', true, 'a product of roots'),
  p('number', '2^{10}', '1,024', true, 'a power and a separated number'),
  p('number', '1\\frac{3}{4}', '1.75', true, 'a mixed number'),
  p('tuple', '(2, -3)', '(2,-3)', true, 'spacing'),
  p('tuple', '(2, 3)', '(3, 2)', false, 'coordinates are ordered'),
  p('tuple', '(\\sqrt{2}, 1)', '(1.41421356237, 1)', true, 'a coordinate to eleven digits'),
  p('choice', '\\text{(E)}', 'E', true, 'a choice letter in text'),
  p('choice', 'C', '(C)', true, 'a choice letter with parentheses'),
  p('choice', '\\text{yes}', 'Yes', true, 'a word answer, any case'),
  p('complex', '-1 + i', 'i - 1', true, 'terms reordered'),
  p('complex', '2e^{i\\pi/2}', '2i', true, "Euler's formula"),
  p('expression', '\\frac{x^2 - 9}{x + 3}', 'x - 3', true, 'a common factor cancelled'),
  p('expression', '\\cos^2 x - \\sin^2 x', '\\cos 2x', true, 'the double-angle identity'),
  p('expression', 'x^2 + 2x + 1', '(x+1)^2', true, 'a square expanded'),
  p('expression', 'x^3', '3x', false, 'a power is not a multiple'),
  p('boxes', 'The solutions are $\\boxed{0}$ and $\\boxed{1}$.', '0, 1', true, 'two roots, each boxed', true),
  p('boxes', '\\boxed{-2} or \\boxed{2}', '\\pm 2', true, 'the two roots of ±, each boxed', true),
  p('boxes', '\\boxed{7}', '7, -7', false, 'one root of two', true),
  p(
    'boxes',
    'Check: \\boxed{1}. Roots: \\boxed{3}, \\boxed{4}',
    '\\{3, 4\\}',
    true,
    'the last two boxes, for a set of two',
    true
  ),
  p('boxes', '<answer>\\boxed{5}</answer>', '5', true, 'one box in the answer block', true)
])
