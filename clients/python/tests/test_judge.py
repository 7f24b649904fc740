"""Judging with the sync and asyncio clients against a real fleet (``sandfleet serve``, process backend: the host's
compilers in bubblewrap sandboxes)."""
from __future__ import annotations

import asyncio

from sandfleet import AsyncClient, Client, JudgeResult, is_retriable_verdict, judge_request

SUM_PY = 'a, b = map(int, input().split())\nprint(a + b)\n'
SUM_CPP = '#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}\n'
TESTS = [
    {'stdin': '1 2\n', 'expected': '3\n'},
    {'stdin': '2 2\n', 'expected': '5\n'},
    {'stdin': '3 4', 'expected': '7'},
]


def test_a_judge_answers_its_verdict_tests_passed_and_each_test(fleet):
    with Client(fleet.url) as client:
        r = client.judge(SUM_PY, tests=TESTS)
        assert isinstance(r, JudgeResult)
        assert (r.verdict, r.passed, r.total, r.language) == ('wrong_answer', 1, 3, 'python')
        assert [t.verdict for t in r.tests] == ['accepted', 'wrong_answer', 'skipped']
        assert r.tests[1].stdout == '4\n' and not r.accepted and not r.retriable
        every = client.judge(SUM_PY, tests=TESTS, run_all=True)
        assert (every.verdict, every.passed) == ('wrong_answer', 2)
        cpp = client.judge(SUM_CPP, language='cpp', tests=[TESTS[0], TESTS[2]])
        assert (cpp.verdict, cpp.compile.status if cpp.compile else None) == ('accepted', 'ok')
        broken = client.judge('int main( {', language='c', tests=TESTS)
        assert broken.verdict == 'compile_error' and broken.compile is not None and 'error' in broken.compile.stderr


def test_the_apps_form_with_fn_name_calls_the_function(fleet):
    with Client(fleet.url) as client:
        code = (
            'class Solution:\n'
            '    def twoSum(self, nums, target):\n'
            '        return [0, 1] if nums[0] + nums[1] == target else [1, 2]\n'
        )
        r = client.judge(
            code,
            input_output={
                'inputs': [[[2, 7, 11, 15], 9], [[3, 2, 4], 6]],
                'outputs': [[[0, 1]], [[1, 2]]],
                'fn_name': 'twoSum',
            },
        )
        assert (r.verdict, r.passed) == ('accepted', 2), r
        assert r.tests[0].returned == [0, 1]


def test_a_refused_judge_is_invalid_request_naming_the_field_and_is_not_retried(fleet):
    with Client(fleet.url) as client:
        r = client.judge('x', tests=TESTS, input_output={'inputs': ['1'], 'outputs': ['1']})
        assert r.verdict == 'invalid_request' and not is_retriable_verdict(r.verdict)
        assert r.error is not None and 'input_output' in r.error['message']
        before = client.stats.retries
        client.judge(SUM_PY, tests=[{'stdin': '1 1', 'expected': '3'}])
        assert client.stats.retries == before, 'a verdict on the program is never retried'


def test_a_batch_answers_in_request_order(fleet):
    with Client(fleet.url) as client:
        requests = [
            judge_request(SUM_PY, tests=TESTS[:1]),
            judge_request(SUM_CPP, language='cpp', tests=TESTS[1:2]),
            judge_request('while True: pass', tests=[{'stdin': ''}], timeout_ms=300),
            judge_request('import sys\nsys.exit(3)', tests=[{'stdin': ''}]),
        ]
        results = client.judge_batch(requests)
        assert [r.verdict for r in results] == ['accepted', 'wrong_answer', 'time_limit', 'runtime_error']


def test_the_asyncio_client_judges_many_at_once(fleet):
    async def main() -> list[JudgeResult]:
        async with AsyncClient(fleet.url) as client:
            return await asyncio.gather(
                *(
                    client.judge(SUM_PY, tests=[{'stdin': f'{i} {i}', 'expected': str(2 * i + (i % 3 == 0))}])
                    for i in range(12)
                )
            )

    results = asyncio.run(main())
    assert [r.verdict for r in results] == ['wrong_answer' if i % 3 == 0 else 'accepted' for i in range(12)]


def test_a_fleet_verdict_says_whether_the_program_may_have_run():
    def of(verdict, **extra):
        return JudgeResult.from_json({'verdict': verdict, 'tests': [], **extra})

    assert not of('infra_error', maybe_ran=False).may_have_run, 'surely not run: the client retries it'
    assert of('infra_error', maybe_ran=True).may_have_run, 'a stall: answered as it is'
    assert of('infra_error').may_have_run, 'absent on an infra_error: as true'
    assert not of('overloaded').may_have_run and not of('invalid_request').may_have_run
    assert of('wrong_answer').may_have_run and of('wrong_answer').maybe_ran is None
