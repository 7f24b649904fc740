"""The wire contract of a sandfleet fleet, as Python types.

Field names are the protocol's (``packages/protocol``): a request is a :class:`ExecRequest`
(a ``TypedDict``, sent as is), a result an :class:`ExecResult` (a dataclass built from the JSON).
Every result has a ``status`` from one closed set; :func:`is_retriable` says whether it was the
fleet's fault (retry it, never penalise the model for it).
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Required, TypedDict, Union

Status = Literal[
    'ok', 'error', 'timeout', 'memory', 'killed', 'overloaded', 'queue_timeout', 'infra_error', 'invalid_request'
]
"""A result status: the code's doing, the fleet's (retriable), or the request's."""

USER_STATUSES: tuple[Status, ...] = ('ok', 'error', 'timeout', 'memory', 'killed')
"""Statuses produced by running the code."""
FLEET_STATUSES: tuple[Status, ...] = ('overloaded', 'queue_timeout', 'infra_error')
"""Statuses produced by the fleet: retriable, never the code's fault."""
REQUEST_STATUSES: tuple[Status, ...] = ('invalid_request',)
"""Status of a request refused before anything ran (HTTP 400)."""
STATUSES: tuple[Status, ...] = USER_STATUSES + FLEET_STATUSES + REQUEST_STATUSES
"""Every status, in the protocol's order."""

Language = Literal['python', 'javascript']
Isolation = Literal['fork', 'reuse']
"""How a Python job is kept from the jobs its sandbox runs before and after it (README, "Isolation levels")."""


def is_retriable(status: str) -> bool:
    """True for ``overloaded``, ``queue_timeout`` and ``infra_error``: the fleet's fault, safe to retry."""
    return status in FLEET_STATUSES


def may_have_run(status: str, maybe_ran: Optional[bool] = None) -> bool:
    """Whether the code of a call answered ``status`` (and ``maybe_ran``) may have run: always for the code's own
    statuses, never for ``invalid_request``; ``overloaded`` and ``queue_timeout`` did not unless ``maybe_ran`` says so;
    an ``infra_error`` may have, unless ``maybe_ran`` is False. Retrying only what this says did not run never runs a
    call twice."""
    if status == 'invalid_request':
        return False
    if status in ('overloaded', 'queue_timeout'):
        return maybe_ran is True
    if status == 'infra_error':
        return maybe_ran is not False
    return True


def is_user_status(status: str) -> bool:
    """True when the status says what the code did (it ran)."""
    return status in USER_STATUSES


def is_tool_error(status: str) -> bool:
    """True when the code ran and did not end ``ok`` (a tool error for reward shaping)."""
    return status != 'ok' and status in USER_STATUSES


FileContent = Union[bytes, str]
"""A file's content: bytes, or text (written as UTF-8)."""


class ExecRequest(TypedDict, total=False):
    """One tool call, as ``POST /v1/execute`` takes it (``files`` base64-encoded)."""

    code: Required[str]
    language: Language
    stdin: str
    timeout_ms: int
    memory_mb: int
    files: dict[str, str]
    fetch_files: list[str]
    isolation: Isolation
    session_id: str
    request_id: str


def encode_files(files: Optional[Mapping[str, FileContent]]) -> Optional[dict[str, str]]:
    """Paths → base64 contents, as the protocol carries files."""
    if files is None:
        return None
    return {
        path: base64.b64encode(data.encode() if isinstance(data, str) else data).decode('ascii')
        for path, data in files.items()
    }


def exec_request(
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
) -> ExecRequest:
    """Builds an :class:`ExecRequest`, leaving out what is not given (the fleet's defaults apply)."""
    req: ExecRequest = {'code': code}
    if language is not None:
        req['language'] = language
    if stdin is not None:
        req['stdin'] = stdin
    if timeout_ms is not None:
        req['timeout_ms'] = timeout_ms
    if memory_mb is not None:
        req['memory_mb'] = memory_mb
    encoded = encode_files(files)
    if encoded is not None:
        req['files'] = encoded
    if fetch_files is not None:
        req['fetch_files'] = list(fetch_files)
    if isolation is not None:
        req['isolation'] = isolation
    if request_id is not None:
        req['request_id'] = request_id
    return req


@dataclass(frozen=True)
class ExecError:
    """Why a run did not end ``ok``: the exception class (``ValueError``) or a stable ``SF_ERR_…`` code."""

    type: str
    message: str
    traceback: Optional[str] = None


@dataclass(frozen=True)
class Truncated:
    """Whether stdout / stderr were cut at the fleet's cap."""

    stdout: bool = False
    stderr: bool = False


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one tool call. ``files`` holds the fetched files, decoded to bytes;
    ``fetch_errors`` says why each other requested file was not returned."""

    status: Status
    stdout: str = ''
    stderr: str = ''
    exit_code: Optional[int] = None
    duration_ms: float = 0
    queue_ms: float = 0
    cpu_ms: Optional[float] = None
    """The job's own CPU time, user + system, in ms, as the kernel counts it (the isolate's on
    pyodide and javascript); None when the sandbox did not measure it."""
    truncated: Truncated = field(default_factory=Truncated)
    error: Optional[ExecError] = None
    files: dict[str, bytes] = field(default_factory=dict)
    fetch_errors: dict[str, str] = field(default_factory=dict)
    runner: str = ''
    sandbox: str = ''
    request_id: Optional[str] = None
    display: Optional[list[dict[str, str]]] = None
    """Session cells only: rich results (``{"text/plain": repr(value)}``)."""
    isolation: Optional[Isolation] = None
    """The level a Python job ran at, on a backend with levels."""
    maybe_ran: Optional[bool] = None
    """On a fleet status: False, the code surely did not run (a retry runs it once); True, it may have (its answer
    was lost, or it stalled). None on an ``infra_error``: as True."""
    replayed: bool = False
    """True: the answer of an earlier run of this ``request_id`` on its runner, not a second run."""

    @property
    def ok(self) -> bool:
        """The code ran and ended well."""
        return self.status == 'ok'

    @property
    def retriable(self) -> bool:
        """The fleet's fault (see :func:`is_retriable`)."""
        return is_retriable(self.status)

    @property
    def may_have_run(self) -> bool:
        """Whether the code may have run (see :func:`may_have_run`)."""
        return may_have_run(self.status, self.maybe_ran)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> 'ExecResult':
        """Builds a result from the protocol's JSON (``files`` base64-decoded)."""
        error = body.get('error')
        truncated = body.get('truncated') or {}
        return cls(
            status=body['status'],
            stdout=body.get('stdout', ''),
            stderr=body.get('stderr', ''),
            exit_code=body.get('exit_code'),
            duration_ms=body.get('duration_ms', 0),
            queue_ms=body.get('queue_ms', 0),
            cpu_ms=None if body.get('cpu_ms') is None else float(body['cpu_ms']),
            truncated=Truncated(stdout=bool(truncated.get('stdout')), stderr=bool(truncated.get('stderr'))),
            error=None
            if error is None
            else ExecError(type=error['type'], message=error['message'], traceback=error.get('traceback')),
            files={path: base64.b64decode(data) for path, data in (body.get('files') or {}).items()},
            fetch_errors=dict(body.get('fetch_errors') or {}),
            runner=body.get('runner', ''),
            sandbox=body.get('sandbox', ''),
            request_id=body.get('request_id'),
            display=body.get('display'),
            isolation=body.get('isolation'),
            maybe_ran=body.get('maybe_ran'),
            replayed=body.get('replayed') is True,
        )

    @classmethod
    def failed(cls, status: Status, code: str, message: str, maybe_ran: Optional[bool] = None) -> 'ExecResult':
        """A result of a call that reached no code (a fleet or request status); ``error.type`` is the code."""
        return cls(status=status, error=ExecError(type=code, message=message), maybe_ran=maybe_ran)


def is_exec_result(body: Any) -> bool:
    """True when ``body`` has the shape of the protocol's ExecResult."""
    return (
        isinstance(body, dict)
        and body.get('status') in STATUSES
        and isinstance(body.get('stdout'), str)
        and isinstance(body.get('stderr'), str)
    )


@dataclass(frozen=True)
class SessionInfo:
    """A session as ``POST /v1/sessions`` and ``GET /v1/sessions/{id}`` describe it."""

    session_id: str
    language: Language
    runner: str
    ttl_s: int
    memory_mb: int
    created_at: str
    last_used_at: str
    expires_at: str
    cells: int

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> 'SessionInfo':
        """Builds the info from the protocol's JSON."""
        return cls(**{name: body[name] for name in cls.__dataclass_fields__})
