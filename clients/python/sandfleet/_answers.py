"""HTTP answers → results: an ErrorBody keeps the fleet's status and code; anything else maps to
the closed status set (429 → ``overloaded``, other failures → ``infra_error``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional, Protocol, Sequence

from .types import FLEET_STATUSES, STATUSES, ExecResult

CONNECTION = 'SF_ERR_CLIENT_CONNECTION'
BAD_RESPONSE = 'SF_ERR_CLIENT_BAD_RESPONSE'
DEADLINE = 'SF_ERR_CLIENT_DEADLINE'


@dataclass(frozen=True)
class Attempt:
    """One HTTP try of a call: its result, the fleet's ``Retry-After`` and the HTTP status (0: no answer)."""

    result: ExecResult
    retry_after_s: float
    http_status: int


@dataclass(frozen=True)
class Answer:
    """A JSON answer; ``result`` is set when it is no 2xx (what the failure stands for)."""

    http_status: int
    body: Any
    retry_after_s: float
    result: Optional[ExecResult]


class Transport(Protocol):
    """What the batching and the sessions use of a client (:class:`~sandfleet.aio.AsyncClient` is one): its
    requests, deadlines and retries."""

    slack_s: float
    closed: bool

    def deadline(self, requests: Sequence[Any], deadline_s: Optional[float]) -> float:
        ...

    async def _request(
        self, method: str, path: str, body: Any, deadline: float, headers: Optional[dict[str, str]] = None
    ) -> Answer:
        ...

    async def _post_json(self, path: str, body: Any, deadline: float) -> Answer:
        ...

    async def _post_exec(
        self, path: str, body: Any, deadline: float, headers: Optional[dict[str, str]] = None
    ) -> Attempt:
        ...

    async def with_retries(
        self, attempt: Callable[[], Awaitable[Attempt]], deadline: float, retriable: Callable[[Attempt], bool] = ...
    ) -> Attempt:
        ...


def is_error_body(body: Any) -> bool:
    """True for the protocol's ErrorBody: ``{"status": …, "error": {"code", "message"}}``."""
    return (
        isinstance(body, dict)
        and body.get('status') in STATUSES
        and isinstance(body.get('error'), dict)
        and isinstance(body['error'].get('code'), str)
        and isinstance(body['error'].get('message'), str)
    )


def result_from_error(http_status: int, body: Any) -> ExecResult:
    """The result a non-2xx answer stands for. The fleet refused the whole request, so a fleet status says nothing ran
    (``maybe_ran`` False), but for a session lost (410: its cell may have)."""
    if is_error_body(body):
        error = body['error']
        message = error['message'] if error.get('field') is None else f"{error['message']} (field: {error['field']})"
        refused = body['status'] in FLEET_STATUSES and http_status != 410
        return ExecResult.failed(body['status'], error['code'], message, maybe_ran=False if refused else None)
    return ExecResult.failed(
        'overloaded' if http_status == 429 else 'infra_error', BAD_RESPONSE, f'HTTP {http_status} without an ErrorBody'
    )


def result_from_failure(err: Optional[BaseException], deadline_passed: bool, never_sent: bool = False) -> ExecResult:
    """The result of a call whose connection failed, or whose deadline passed in flight: it may have run, unless its
    connection was never made (``never_sent``)."""
    if deadline_passed:
        return ExecResult.failed(
            'infra_error', DEADLINE, "the call's deadline passed before the fleet answered", maybe_ran=True
        )
    return ExecResult.failed('infra_error', CONNECTION, f'{type(err).__name__}: {err}', maybe_ran=not never_sent)
