"""The asyncio client: :class:`AsyncClient`.

Single calls are batched automatically, the fleet's retriable statuses retried with backoff
(honouring ``Retry-After``) within each call's deadline (only those whose code surely did not
run, unless ``retry_maybe_ran=True``: then under the call's ``request_id``, to the runner that had
it, so it is answered from its first run while that runner lives), and every call returns an
:class:`~sandfleet.types.ExecResult` whose ``status`` says what happened: nothing is raised for
a status. Cancel a call by cancelling its task (``asyncio.timeout`` works too).

    async with AsyncClient('http://127.0.0.1:8080') as fleet:
        results = await asyncio.gather(*(fleet.execute(f'print({i} ** 2)') for i in range(100)))
"""
from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Optional, Sequence, Union

try:
    import httpx
except ModuleNotFoundError as missing:  # the one dependency: say how to get it
    if missing.name != 'httpx':
        raise
    raise ImportError(
        'the sandfleet client needs httpx: apt-get install python3-httpx (Debian, Ubuntu) or pip install httpx',
        name='httpx',
    ) from missing

from ._answers import BAD_RESPONSE, Answer, Attempt, result_from_error, result_from_failure
from ._coalescer import Coalescer
from .errors import ClientClosedError
from .judge import (
    CallTest,
    Compare,
    InputOutput,
    JudgeRequest,
    JudgeResult,
    StdinTest,
    judge_request,
    judge_rounds,
    judge_time_bound_ms,
)
from .retry import RetryPolicy, backoff_delay_s, parse_retry_after_s
from .session import AsyncSession
from .types import ExecRequest, ExecResult, FileContent, Isolation, Language, exec_request, is_exec_result

RUNNER_HEADER = 'x-sandfleet-runner'
"""The header a retry names the runner that had the call with (the protocol's ``GATEWAY_HEADERS.runner``)."""

MAX_BATCH_ITEMS = 1024
"""Most items of one batch request (the protocol's limit)."""
DEFAULT_TIMEOUT_MS = 10_000
"""The fleet's default ``timeout_ms``."""

RequestLike = Union[str, ExecRequest]
"""A request, or just its code (Python, the fleet's defaults)."""


@dataclass
class RetryStats:
    """Counters of a client: calls made, HTTP attempts, retries."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0


def as_request(request: RequestLike) -> ExecRequest:
    """A request from a request or from code alone."""
    return {'code': request} if isinstance(request, str) else request


class AsyncClient:
    """The client of a fleet's public HTTP API, for asyncio; use it as ``async with`` or call :meth:`close`.

    :param url: the gateway, e.g. ``http://127.0.0.1:8080``
    :param api_key: sent as ``Authorization: Bearer``
    :param batch_window_s: how long a single call waits for company before it leaves (0: no batching)
    :param max_batch: most calls per automatic batch
    :param retry: attempts and backoff for the fleet's retriable statuses
    :param retry_maybe_ran: also retry fleet answers whose code may have run (an ``infra_error`` whose ``maybe_ran``
        is not False, a connection lost mid-call); by default only what surely did not run is retried, so a call
        never runs twice. When True each call carries a ``request_id`` (one is made when it has none) and a retry
        names the runner that had it, which answers from its first run (``replayed``) while it lives; a runner that
        died may have run it (at least once)
    :param deadline_slack_s: time a call may take beyond its ``timeout_ms`` (queueing, retries); keep
        it above the gateway's ``queueTimeoutMs`` + ``callGraceMs`` (25 s by default)
    """

    def __init__(
        self,
        url: str = 'http://127.0.0.1:8080',
        *,
        api_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        max_connections: int = 32,
        batch_window_s: float = 0.002,
        max_batch: int = 64,
        retry: RetryPolicy = RetryPolicy(),
        deadline_slack_s: float = 30.0,
        retry_maybe_ran: bool = False,
    ) -> None:
        all_headers = dict(headers or {})
        if api_key:
            all_headers['authorization'] = f'Bearer {api_key}'
        self._http = httpx.AsyncClient(
            base_url=url.rstrip('/'),
            headers=all_headers,
            timeout=None,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self._coalescer = (
            Coalescer(self, batch_window_s, min(max_batch, MAX_BATCH_ITEMS)) if batch_window_s > 0 else None
        )
        self.policy = retry
        self.retry_maybe_ran = retry_maybe_ran
        self.slack_s = deadline_slack_s
        self.stats = RetryStats()
        self.closed = False

    @property
    def coalesced(self) -> dict[str, int]:
        """Automatic batches and single requests sent so far."""
        return (
            {'batches': self._coalescer.batches, 'singles': self._coalescer.singles}
            if self._coalescer
            else {'batches': 0, 'singles': 0}
        )

    async def __aenter__(self) -> 'AsyncClient':
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the connections; safe to call twice."""
        if self.closed:
            return
        self.closed = True
        await self._http.aclose()

    def _retriable(self, result: ExecResult) -> bool:
        """Whether a result is retried: a fleet status whose code surely did not run (any fleet status with
        ``retry_maybe_ran``)."""
        return result.retriable and (self.retry_maybe_ran or not result.may_have_run)

    def _identified(self, request: ExecRequest) -> ExecRequest:
        """``request`` as it is sent: with a ``request_id`` of its own when retries may repeat a call that ran."""
        if self.retry_maybe_ran and 'request_id' not in request:
            return {**request, 'request_id': uuid.uuid4().hex}
        return request

    def _check_open(self) -> None:
        if self.closed:
            raise ClientClosedError('the client is closed')

    def deadline(self, requests: Sequence[Mapping[str, Any]], deadline_s: Optional[float]) -> float:
        """The loop time by which a call must be over: ``deadline_s``, else its longest ``timeout_ms`` plus the
        slack."""
        if deadline_s is None:
            deadline_s = max(r.get('timeout_ms', DEFAULT_TIMEOUT_MS) for r in requests) / 1000 + self.slack_s
        return asyncio.get_running_loop().time() + deadline_s

    # -- HTTP ---------------------------------------------------------------------------------

    async def _request(
        self, method: str, path: str, body: Any, deadline: float, headers: Optional[dict[str, str]] = None
    ) -> Answer:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return Answer(0, None, 0.0, result_from_failure(None, True))
        # httpx's timeouts (each phase bounded by what is left), not asyncio.timeout; and the
        # request in a task of its own: httpcore's anyio reads re-cancel the task they run in,
        # which would turn a caller's asyncio.timeout into a bare CancelledError.
        request = asyncio.ensure_future(
            self._http.request(method, path, json=body, headers=headers, timeout=httpx.Timeout(remaining))
        )
        try:
            res = await request
        except httpx.ConnectTimeout as err:  # the connection was never made: nothing was sent
            return Answer(0, None, 0.0, result_from_failure(err, False, never_sent=True))
        except httpx.TimeoutException:
            return Answer(0, None, 0.0, result_from_failure(None, True))
        except httpx.ConnectError as err:
            return Answer(0, None, 0.0, result_from_failure(err, False, never_sent=True))
        except httpx.HTTPError as err:
            return Answer(0, None, 0.0, result_from_failure(err, False))
        retry_after_s = parse_retry_after_s(res.headers.get('retry-after'))
        try:
            parsed = res.json() if res.content else None
        except ValueError:
            parsed = None
        failure = None if 200 <= res.status_code < 300 else result_from_error(res.status_code, parsed)
        return Answer(res.status_code, parsed, retry_after_s, failure)

    async def _post_json(self, path: str, body: Any, deadline: float) -> Answer:
        return await self._request('POST', path, body, deadline)

    async def _post_exec(
        self, path: str, body: Any, deadline: float, headers: Optional[dict[str, str]] = None
    ) -> Attempt:
        answer = await self._request('POST', path, body, deadline, headers)
        if answer.result is not None:
            return Attempt(answer.result, answer.retry_after_s, answer.http_status)
        result = (
            ExecResult.from_json(answer.body)
            if is_exec_result(answer.body)
            else ExecResult.failed('infra_error', BAD_RESPONSE, 'not an ExecResult')
        )
        return Attempt(result, answer.retry_after_s, answer.http_status)

    async def with_retries(
        self,
        attempt: Callable[[], Awaitable[Attempt]],
        deadline: float,
        retriable: Optional[Callable[[Attempt], bool]] = None,
    ) -> Attempt:
        """Runs ``attempt`` until it is not retriable (default: :meth:`_retriable`), the attempts run out, or the next
        try would start past ``deadline``."""
        if retriable is None:
            retriable = lambda a: self._retriable(a.result)  # noqa: E731
        loop = asyncio.get_running_loop()
        self.stats.calls += 1
        last: Optional[Attempt] = None
        n = 0
        while True:
            n += 1
            if loop.time() >= deadline:
                return last or Attempt(result_from_failure(None, True), 0.0, 0)
            self.stats.attempts += 1
            last = await attempt()
            if not retriable(last) or n >= self.policy.max_attempts:
                return last
            delay = backoff_delay_s(self.policy, n, last.retry_after_s)
            if loop.time() + delay >= deadline:
                return last
            await asyncio.sleep(delay)
            self.stats.retries += 1

    # -- calls --------------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        *,
        language: Optional[Language] = None,
        stdin: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        memory_mb: Optional[int] = None,
        files: Optional[Mapping[str, FileContent]] = None,
        fetch_files: Optional[list[str]] = None,
        isolation: Optional[Isolation] = None,
        request_id: Optional[str] = None,
        deadline_s: Optional[float] = None,
    ) -> ExecResult:
        """Runs one call (batched with the calls made at the same moment); ``files`` are written
        before it runs, ``fetch_files`` read back into ``result.files`` (bytes); ``isolation``:
        ``fork`` or ``reuse`` (the runner's default when not given)."""
        request = exec_request(
            code,
            language=language,
            stdin=stdin,
            timeout_ms=timeout_ms,
            memory_mb=memory_mb,
            files=files,
            fetch_files=fetch_files,
            isolation=isolation,
            request_id=request_id,
        )
        return await self.execute_request(request, deadline_s=deadline_s)

    async def execute_request(self, request: ExecRequest, *, deadline_s: Optional[float] = None) -> ExecResult:
        """Like :meth:`execute`, from an :class:`ExecRequest`."""
        self._check_open()
        deadline = self.deadline([request], deadline_s)
        coalescer = self._coalescer
        sent = self._identified(request)
        last: list[Attempt] = []

        async def attempt() -> Attempt:
            # a retry goes to the runner that had the call, which answers it from its first run while it lives
            runner = last[-1].result.runner if last else ''
            if coalescer is not None and not runner:
                outcome = await coalescer.submit(sent, deadline)
            else:
                headers = {RUNNER_HEADER: runner} if runner else None
                outcome = await self._post_exec('/v1/execute', sent, deadline, headers)
            last.append(outcome)
            return outcome

        return (await self.with_retries(attempt, deadline)).result

    async def execute_batch(
        self, requests: Sequence[RequestLike], *, deadline_s: Optional[float] = None
    ) -> list[ExecResult]:
        """Runs many calls as explicit batches (chunks of 1024); results in request order; items
        that come back retriable are sent again together."""
        self._check_open()
        reqs = [self._identified(as_request(r)) for r in requests]
        if not reqs:
            return []
        deadline = self.deadline(reqs, deadline_s)
        chunks = [reqs[i : i + MAX_BATCH_ITEMS] for i in range(0, len(reqs), MAX_BATCH_ITEMS)]
        parts = await asyncio.gather(*(self._batch_rounds(chunk, deadline) for chunk in chunks))
        return [r for part in parts for r in part]

    async def _batch_rounds(self, reqs: list[ExecRequest], deadline: float) -> list[ExecResult]:
        results: list[Optional[ExecResult]] = [None] * len(reqs)
        pending = list(range(len(reqs)))
        self.stats.calls += len(reqs)
        loop = asyncio.get_running_loop()
        for round_ in range(1, self.policy.max_attempts + 1):
            self.stats.attempts += len(pending)
            answer = await self._post_json('/v1/execute/batch', {'requests': [reqs[i] for i in pending]}, deadline)
            got = self._batch_results(answer, len(pending))
            again = []
            for i, result in zip(pending, got):
                results[i] = result
                if self._retriable(result):
                    again.append(i)
            delay = backoff_delay_s(self.policy, round_, answer.retry_after_s)
            if not again or round_ == self.policy.max_attempts or loop.time() + delay >= deadline:
                break
            await asyncio.sleep(delay)
            self.stats.retries += len(again)
            pending = again
        return [r for r in results if r is not None]

    @staticmethod
    def _batch_results(answer: Answer, count: int) -> list[ExecResult]:
        if answer.result is not None:
            return [answer.result] * count
        results = answer.body.get('results') if isinstance(answer.body, dict) else None
        if not isinstance(results, list) or len(results) != count:
            return [
                ExecResult.failed('infra_error', BAD_RESPONSE, 'the batch answer does not hold one result per request')
            ] * count
        return [
            ExecResult.from_json(r)
            if is_exec_result(r)
            else ExecResult.failed('infra_error', BAD_RESPONSE, 'not an ExecResult')
            for r in results
        ]

    async def stream_batch(
        self, requests: Sequence[RequestLike], *, deadline_s: Optional[float] = None
    ) -> AsyncIterator[tuple[int, ExecResult]]:
        """Runs a batch with a streamed answer (NDJSON): yields ``(index, result)`` as each item
        finishes (completion order). Retriable items are sent again after the stream ends."""
        self._check_open()
        reqs = [self._identified(as_request(r)) for r in requests]
        if len(reqs) > MAX_BATCH_ITEMS:
            raise ValueError(f'a streamed batch holds at most {MAX_BATCH_ITEMS} requests')
        if not reqs:
            return
        deadline = self.deadline(reqs, deadline_s)
        loop = asyncio.get_running_loop()
        pending = list(range(len(reqs)))
        self.stats.calls += len(reqs)
        for round_ in range(1, self.policy.max_attempts + 1):
            last = round_ == self.policy.max_attempts
            self.stats.attempts += len(pending)
            seen: set[int] = set()
            again: list[int] = []
            failure: Optional[ExecResult] = None
            retry_after_s = 0.0
            # A per-read timeout (what is left of the deadline), not asyncio.timeout: this
            # generator yields inside the stream, and a timeout armed here would cancel the caller.
            try:
                async with self._http.stream(
                    'POST',
                    '/v1/execute/batch',
                    json={'requests': [reqs[i] for i in pending]},
                    headers={'accept': 'application/x-ndjson'},
                    timeout=httpx.Timeout(max(0.001, deadline - loop.time())),
                ) as res:
                    retry_after_s = parse_retry_after_s(res.headers.get('retry-after'))
                    if res.status_code >= 300:
                        body = await res.aread()
                        try:
                            failure = result_from_error(res.status_code, json.loads(body) if body else None)
                        except ValueError:
                            failure = result_from_error(res.status_code, None)
                    else:
                        async for line in res.aiter_lines():
                            item = self._stream_line(line, len(pending))
                            if item is None:
                                continue
                            k, result = item
                            seen.add(k)
                            if self._retriable(result) and not last:
                                again.append(pending[k])
                            else:
                                yield pending[k], result
            except httpx.TimeoutException:
                failure = result_from_failure(None, True)
            except httpx.HTTPError as err:
                failure = result_from_failure(err, False)
            for k, index in enumerate(pending):  # items the stream never answered
                if k in seen:
                    continue
                result = failure or ExecResult.failed('infra_error', BAD_RESPONSE, 'the stream ended without this item')
                if self._retriable(result) and not last:
                    again.append(index)
                else:
                    yield index, result
            if not again:
                return
            delay = backoff_delay_s(self.policy, round_, retry_after_s)
            if loop.time() + delay >= deadline:
                for index in again:
                    yield index, failure or result_from_failure(None, True)
                return
            await asyncio.sleep(delay)
            self.stats.retries += len(again)
            pending = again

    @staticmethod
    def _stream_line(line: str, count: int) -> Optional[tuple[int, ExecResult]]:
        if not line.strip():
            return None
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        index = obj.get('index') if isinstance(obj, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or not is_exec_result(obj.get('result')):
            return None
        return index, ExecResult.from_json(obj['result'])

    # -- judges -------------------------------------------------------------------------------

    async def judge(
        self,
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
        deadline_s: Optional[float] = None,
    ) -> JudgeResult:
        """Judges one program against its tests in one sandbox (``tests``, or ``input_output`` in the APPS form);
        the fleet's verdicts are retried within the deadline, a verdict on the program never."""
        request = judge_request(
            code,
            tests=tests,
            input_output=input_output,
            language=language,
            compare=compare,
            run_all=run_all,
            timeout_ms=timeout_ms,
            memory_mb=memory_mb,
            compile_timeout_ms=compile_timeout_ms,
            isolation=isolation,
            request_id=request_id,
        )
        return (await self.judge_batch([request], deadline_s=deadline_s, batch=False))[0]

    async def judge_batch(
        self, requests: Sequence[JudgeRequest], *, deadline_s: Optional[float] = None, batch: bool = True
    ) -> list[JudgeResult]:
        """Judges many (``/v1/judge/batch``, chunks of 1024); results in request order, judges with a fleet verdict
        sent again together."""
        self._check_open()
        reqs = list(requests)
        if not reqs:
            return []
        if deadline_s is None:
            deadline_s = max(judge_time_bound_ms(r) for r in reqs) / 1000 + self.slack_s
        deadline = asyncio.get_running_loop().time() + deadline_s
        chunks = [reqs[i : i + MAX_BATCH_ITEMS] for i in range(0, len(reqs), MAX_BATCH_ITEMS)]
        parts = await asyncio.gather(*(judge_rounds(self, chunk, batch, deadline) for chunk in chunks))
        return [r for part in parts for r in part]

    # -- sessions -----------------------------------------------------------------------------

    def session(
        self, *, language: Language = 'python', ttl_s: Optional[int] = None, memory_mb: Optional[int] = None
    ) -> AsyncSession:
        """A session (interpreter state kept across calls), opened by ``async with`` (or ``await s.open()``)
        and closed at the block's end."""
        self._check_open()
        return AsyncSession(self, language=language, ttl_s=ttl_s, memory_mb=memory_mb)

    async def create_session(
        self, *, language: Language = 'python', ttl_s: Optional[int] = None, memory_mb: Optional[int] = None
    ) -> AsyncSession:
        """Opens a session now; close it with ``await session.close()``."""
        session = self.session(language=language, ttl_s=ttl_s, memory_mb=memory_mb)
        await session.open()
        return session
