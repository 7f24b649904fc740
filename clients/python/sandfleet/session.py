"""Sessions: one sandbox whose interpreter state (variables, imports, files) persists across
calls until its TTL or ``close()``. A session lives on one runner; if that runner or sandbox
dies the fleet answers HTTP 410 and :class:`~sandfleet.errors.SessionLostError` is raised,
never a silent fresh state. A session closed by this program raises
:class:`~sandfleet.errors.SessionClosedError`."""
from __future__ import annotations

import urllib.parse
from typing import Literal, Mapping, Optional

from ._answers import BAD_RESPONSE, Attempt, Transport
from .errors import SessionClosedError, SessionLostError, SessionRequestError
from .types import ExecResult, FileContent, Language, SessionInfo, encode_files

SessionState = Literal['new', 'open', 'lost', 'closed']


class AsyncSession:
    """A fleet session for asyncio; ``async with client.session() as s: await s.execute('x = 1')``."""

    def __init__(
        self, client: Transport, *, language: Language, ttl_s: Optional[int], memory_mb: Optional[int]
    ) -> None:
        self._client = client
        self._create = {
            'language': language,
            **({'ttl_s': ttl_s} if ttl_s is not None else {}),
            **({'memory_mb': memory_mb} if memory_mb is not None else {}),
        }
        self.state: SessionState = 'new'
        self.info: Optional[SessionInfo] = None
        """What the fleet said when it opened the session."""

    @property
    def id(self) -> str:
        """The fleet's session id."""
        if self.info is None:
            raise SessionRequestError('the session is not open yet')
        return self.info.session_id

    def _path(self, suffix: str = '') -> str:
        return f"/v1/sessions/{urllib.parse.quote(self.id, safe='')}{suffix}"

    async def open(self) -> 'AsyncSession':
        """Creates the session on the fleet (``overloaded`` retried like any call)."""
        if self.state != 'new':
            return self
        client = self._client
        deadline = client.deadline([{}], client.slack_s)

        async def attempt() -> Attempt:
            answer = await client._request('POST', '/v1/sessions', self._create, deadline)
            result = answer.result or ExecResult(status='ok')
            if answer.result is None and not (
                isinstance(answer.body, dict) and isinstance(answer.body.get('session_id'), str)
            ):
                result = ExecResult.failed('infra_error', BAD_RESPONSE, 'not a SessionInfo')
            self._answer = answer.body
            return Attempt(result, answer.retry_after_s, answer.http_status)

        outcome = await client.with_retries(attempt, deadline)
        if not outcome.result.ok:
            message = outcome.result.error.message if outcome.result.error else ''
            raise SessionRequestError(f'could not create a session: {outcome.result.status}: {message}', outcome.result)
        self.info = SessionInfo.from_json(self._answer)
        self.state = 'open'
        return self

    async def execute(
        self,
        code: str,
        *,
        stdin: Optional[str] = None,
        timeout_ms: Optional[int] = None,
        files: Optional[Mapping[str, FileContent]] = None,
        fetch_files: Optional[list[str]] = None,
        request_id: Optional[str] = None,
        deadline_s: Optional[float] = None,
    ) -> ExecResult:
        """Runs a cell in the session's state. Only ``overloaded`` and ``queue_timeout`` are retried
        (an ``infra_error`` may have run half a cell). Raises :class:`SessionLostError` on HTTP 410,
        :class:`SessionClosedError` after ``close()``."""
        if self.state == 'closed':
            raise SessionClosedError(
                f'session {self.info.session_id if self.info else "(never opened)"} was closed by this program; '
                'open a new one'
            )
        if self.state == 'lost':
            raise SessionLostError(f'session {self.id} is lost (HTTP 410): its state is gone, open a new session')
        if self.state == 'new':
            await self.open()
        body: dict[str, object] = {'code': code}
        for name, value in (
            ('stdin', stdin),
            ('timeout_ms', timeout_ms),
            ('files', encode_files(files)),
            ('fetch_files', fetch_files),
            ('request_id', request_id),
        ):
            if value is not None:
                body[name] = value
        client = self._client
        deadline = client.deadline([body], deadline_s)
        outcome = await client.with_retries(
            lambda: client._post_exec(self._path('/execute'), body, deadline),
            deadline,
            retriable=lambda a: a.http_status != 410 and a.result.status in ('overloaded', 'queue_timeout'),
        )
        if outcome.http_status == 410:
            self.state = 'lost'
            raise SessionLostError(
                f'session {self.id} is lost (HTTP 410): its state is gone, open a new session', outcome.result
            )
        return outcome.result

    async def describe(self) -> SessionInfo:
        """The session as the fleet sees it now (cells run, expiry)."""
        client = self._client
        answer = await client._request('GET', self._path(), None, client.deadline([{}], client.slack_s))
        if answer.http_status == 410:
            self.state = 'lost'
            raise SessionLostError(f'session {self.id} is lost (HTTP 410)', answer.result)
        if answer.result is not None or not is_session_info(answer.body):
            raise SessionRequestError(f'could not describe session {self.id}', answer.result)
        return SessionInfo.from_json(answer.body)

    async def close(self) -> None:
        """Deletes the session on the fleet; safe to call twice (the fleet reaps it at its TTL anyway)."""
        if self.state in ('closed', 'new'):
            self.state = 'closed'
            return
        self.state = 'closed'
        client = self._client
        if not client.closed:
            await client._request('DELETE', self._path(), None, client.deadline([{}], 10.0))

    async def __aenter__(self) -> 'AsyncSession':
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def is_session_info(body: object) -> bool:
    """True when ``body`` has a SessionInfo's fields."""
    return isinstance(body, dict) and all(name in body for name in SessionInfo.__dataclass_fields__)
