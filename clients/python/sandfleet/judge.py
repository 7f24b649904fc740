"""Judging a program against its tests (``POST /v1/judge``, ``/v1/judge/batch``), as Python types and the calls.

A request is a :class:`JudgeRequest` (a ``TypedDict``, sent as is: the protocol's field names), a result a
:class:`JudgeResult` whose ``verdict`` blames one party: the program (``accepted`` … ``output_limit``), the fleet
(``overloaded``, ``queue_timeout``, ``infra_error``: never a verdict on the program; retried by the client where the
program surely did not run, its ``maybe_ran`` as an execute's, unless ``retry_maybe_ran``) or the
caller (``invalid_request``).

    async with AsyncClient(url) as fleet:
        r = await fleet.judge('print(sum(map(int, input().split())))', tests=[{'stdin': '1 2', 'expected': '3'}])
        reward = 1.0 if r.accepted else r.passed / max(1, r.total)
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, Required, Sequence, TypedDict, Union

from ._answers import BAD_RESPONSE, Answer
from .retry import backoff_delay_s
from .types import FLEET_STATUSES, Isolation
from .types import may_have_run as status_may_have_run

if TYPE_CHECKING:
    from .aio import AsyncClient

ProgramVerdict = Literal[
    'accepted', 'wrong_answer', 'time_limit', 'memory_limit', 'runtime_error', 'compile_error', 'output_limit'
]
"""A verdict on the program."""
Verdict = Union[ProgramVerdict, Literal['overloaded', 'queue_timeout', 'infra_error', 'invalid_request']]
"""A judge's verdict: the program's, the fleet's (retriable), or the caller's."""
PROGRAM_VERDICTS: tuple[str, ...] = (
    'accepted',
    'wrong_answer',
    'time_limit',
    'memory_limit',
    'runtime_error',
    'compile_error',
    'output_limit',
)
VERDICTS: tuple[str, ...] = PROGRAM_VERDICTS + FLEET_STATUSES + ('invalid_request',)
"""Every verdict, in the protocol's order."""

DEFAULT_TEST_TIMEOUT_MS = 4000
"""The contract's ``timeout_ms`` of each test."""
DEFAULT_COMPILE_TIMEOUT_MS = 10_000
"""The contract's ``compile_timeout_ms``."""
SOFT_STOP_MS = 500
"""How long a stopped run may take to end (the contract's ``GRACES.softStopMs``)."""
CHECKER_MIN_TIMEOUT_MS = 5000
"""A checker's least time limit each test."""


def is_retriable_verdict(verdict: str) -> bool:
    """True for the fleet's verdicts (``overloaded``, ``queue_timeout``, ``infra_error``): retry, never a reward."""
    return verdict in FLEET_STATUSES


class StdinTest(TypedDict, total=False):
    """A test the program reads on stdin; ``expected`` is what it must print (absent: it must only end well)."""

    stdin: str
    expected: str


class CallTest(TypedDict, total=False):
    """A LeetCode-style test (Python): ``{'call': {'function': 'twoSum', 'args': [[2, 7], 9]}, 'expected': [0, 1]}``."""

    call: Required[dict[str, Any]]
    expected: Any


class InputOutput(TypedDict, total=False):
    """The APPS/TACO/verl form of a problem's tests: ``inputs`` and ``outputs``, with ``fn_name`` for calls."""

    inputs: Required[list[Any]]
    outputs: Required[list[Any]]
    fn_name: str


Compare = Union[Literal['lines', 'exact', 'tokens'], dict[str, Any]]
"""``lines`` (default), ``exact``, ``tokens``, ``{'float': 1e-6}`` or ``{'checker': {'language', 'code'}}``."""


class JudgeRequest(TypedDict, total=False):
    """A program and its tests, as ``POST /v1/judge`` takes them (``tests`` or ``input_output``)."""

    code: Required[str]
    language: str
    tests: list[Union[StdinTest, CallTest]]
    input_output: InputOutput
    compare: Compare
    run_all: bool
    timeout_ms: int
    memory_mb: int
    compile_timeout_ms: int
    isolation: Isolation
    request_id: str


def judge_request(
    code: str,
    *,
    tests: Optional[Sequence[Union[StdinTest, CallTest]]] = None,
    input_output: Optional[InputOutput] = None,
    language: Optional[str] = None,
    compare: Optional[Compare] = None,
    run_all: Optional[bool] = None,
    timeout_ms: Optional[int] = None,
    memory_mb: Optional[int] = None,
    compile_timeout_ms: Optional[int] = None,
    isolation: Optional[Isolation] = None,
    request_id: Optional[str] = None,
) -> JudgeRequest:
    """Builds a :class:`JudgeRequest`, leaving out what is not given (the fleet's defaults apply)."""
    req: JudgeRequest = {'code': code}
    optional: dict[str, Any] = {
        'language': language,
        'tests': None if tests is None else list(tests),
        'input_output': input_output,
        'compare': compare,
        'run_all': run_all,
        'timeout_ms': timeout_ms,
        'memory_mb': memory_mb,
        'compile_timeout_ms': compile_timeout_ms,
        'isolation': isolation,
        'request_id': request_id,
    }
    for name, value in optional.items():
        if value is not None:
            req[name] = value  # type: ignore[literal-required]
    return req


def judge_time_bound_ms(request: Mapping[str, Any]) -> int:
    """The longest a judge may run once a sandbox took it (the contract's ``judgeTimeBoundMs``)."""
    timeout_ms = request.get('timeout_ms', DEFAULT_TEST_TIMEOUT_MS)
    compare = request.get('compare')
    checker = isinstance(compare, dict) and 'checker' in compare
    io = request.get('input_output') or {}
    tests = len(request.get('tests') or io.get('inputs') or [])
    per_test = timeout_ms + SOFT_STOP_MS + (max(timeout_ms, CHECKER_MIN_TIMEOUT_MS) + SOFT_STOP_MS if checker else 0)
    compile_ms = request.get('compile_timeout_ms', DEFAULT_COMPILE_TIMEOUT_MS)
    return (2 if checker else 1) * (compile_ms + SOFT_STOP_MS) + tests * per_test


@dataclass(frozen=True)
class CompileResult:
    """How the compile step went (Python's is to bytecode); ``cached``: the runner's cache had the binary."""

    status: str
    stdout: str = ''
    stderr: str = ''
    exit_code: Optional[int] = None
    duration_ms: float = 0
    cpu_ms: Optional[float] = None
    cached: bool = False


@dataclass(frozen=True)
class TestResult:
    """One test: its verdict (``skipped`` when it did not run), output, exit code or signal, times."""

    verdict: str
    stdout: str = ''
    stderr: str = ''
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    duration_ms: float = 0
    cpu_ms: Optional[float] = None
    returned: Any = None
    """A call test: the function's return value."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The test's JSON as the fleet sent it (truncation, the checker's run, the error)."""


@dataclass(frozen=True)
class JudgeResult:
    """The outcome of a judge: ``verdict``, tests ``passed`` of ``total``, the compile step and each test."""

    verdict: Verdict
    passed: int = 0
    total: int = 0
    language: str = ''
    compile: Optional[CompileResult] = None
    tests: list[TestResult] = field(default_factory=list)
    error: Optional[dict[str, str]] = None
    """For a fleet verdict or ``invalid_request``: ``{'type': 'SF_ERR_…', 'message': …}``."""
    duration_ms: float = 0
    queue_ms: float = 0
    runner: str = ''
    sandbox: str = ''
    request_id: Optional[str] = None
    maybe_ran: Optional[bool] = None
    """On a fleet verdict: whether the program may have started (False: surely not; None on an ``infra_error``: as
    True)."""

    @property
    def accepted(self) -> bool:
        """Every test passed."""
        return self.verdict == 'accepted'

    @property
    def retriable(self) -> bool:
        """The fleet's fault: nothing is said of the program."""
        return is_retriable_verdict(self.verdict)

    @property
    def may_have_run(self) -> bool:
        """Whether the program may have run: always for a verdict on it, never for ``invalid_request``; for a fleet
        verdict what ``maybe_ran`` says (see :func:`sandfleet.types.may_have_run`)."""
        if self.verdict in ('invalid_request', 'overloaded', 'queue_timeout', 'infra_error'):
            return status_may_have_run(self.verdict, self.maybe_ran)
        return True

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> 'JudgeResult':
        """Builds a result from the protocol's JSON."""
        compile_ = body.get('compile')
        return cls(
            verdict=body['verdict'],
            passed=body.get('passed', 0),
            total=body.get('total', 0),
            language=body.get('language', ''),
            compile=None
            if compile_ is None
            else CompileResult(**{k: compile_[k] for k in CompileResult.__dataclass_fields__ if k in compile_}),
            tests=[
                TestResult(**{k: t[k] for k in TestResult.__dataclass_fields__ if k in t and k != 'raw'}, raw=dict(t))
                for t in body.get('tests', [])
            ],
            error=body.get('error'),
            duration_ms=body.get('duration_ms', 0),
            queue_ms=body.get('queue_ms', 0),
            runner=body.get('runner', ''),
            sandbox=body.get('sandbox', ''),
            request_id=body.get('request_id'),
            maybe_ran=body.get('maybe_ran'),
        )

    @classmethod
    def failed(
        cls, verdict: Verdict, language: str, code: str, message: str, maybe_ran: Optional[bool] = None
    ) -> 'JudgeResult':
        """A judge answered without its result (a fleet verdict or a refusal); ``error['type']`` is the code."""
        return cls(verdict=verdict, language=language, error={'type': code, 'message': message}, maybe_ran=maybe_ran)


def is_judge_result(body: Any) -> bool:
    """True when ``body`` has the shape of the protocol's JudgeResult."""
    return isinstance(body, dict) and body.get('verdict') in VERDICTS and isinstance(body.get('tests'), list)


def _failed(language: str, answer: Answer) -> JudgeResult:
    """What an answer that holds no judge result stands for (an ErrorBody's status, or the fleet's fault)."""
    r = answer.result
    if r is None:
        return JudgeResult.failed('infra_error', language, BAD_RESPONSE, 'the answer holds no JudgeResult')
    verdict = r.status if r.status in VERDICTS else 'infra_error'
    return JudgeResult.failed(
        verdict, language, r.error.type if r.error else '', r.error.message if r.error else '', r.maybe_ran
    )


async def judge_rounds(
    client: 'AsyncClient', requests: Sequence[JudgeRequest], batch: bool, deadline: float
) -> list[JudgeResult]:
    """Sends ``requests`` (one to ``/v1/judge``, or a batch) until none has a fleet verdict, or the attempts or the
    time run out; results in request order."""
    loop = asyncio.get_running_loop()
    results: list[Optional[JudgeResult]] = [None] * len(requests)
    pending = list(range(len(requests)))
    client.stats.calls += len(requests)
    for round_ in range(1, client.policy.max_attempts + 1):
        client.stats.attempts += len(pending)
        if batch:
            answer = await client._post_json('/v1/judge/batch', {'requests': [requests[i] for i in pending]}, deadline)
            items = answer.body.get('results') if answer.result is None and isinstance(answer.body, dict) else None
        else:
            answer = await client._post_json('/v1/judge', requests[0], deadline)
            items = [answer.body] if answer.result is None else None
        again = []
        for k, i in enumerate(pending):
            language = requests[i].get('language', 'python')
            item = items[k] if isinstance(items, list) and len(items) == len(pending) else None
            result = JudgeResult.from_json(item) if is_judge_result(item) else _failed(language, answer)
            results[i] = result
            if result.retriable and (client.retry_maybe_ran or not result.may_have_run):
                again.append(i)
        delay = backoff_delay_s(client.policy, round_, answer.retry_after_s)
        if not again or round_ == client.policy.max_attempts or loop.time() + delay >= deadline:
            break
        await asyncio.sleep(delay)
        client.stats.retries += len(again)
        pending = again
    return [r for r in results if r is not None]
