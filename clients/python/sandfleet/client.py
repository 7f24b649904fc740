"""The synchronous client: :class:`Client`.

It drives an :class:`~sandfleet.aio.AsyncClient` on a private event-loop thread, so calls made
at the same moment from many threads (a thread pool of tool calls) are batched together too,
and both clients behave the same: retries, deadlines, sessions, streaming.

    with Client('http://127.0.0.1:8080') as fleet:
        result = fleet.execute('print(6 * 7)', timeout_ms=5000)
        assert result.status == 'ok' and result.stdout == '42\\n'

A call waits at most its deadline (``deadline_s``, else ``timeout_ms`` plus the slack); Ctrl-C
(or any exception in the waiting thread) cancels it on the fleet's side of the client too.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Coroutine, Iterator, Mapping, Optional, Sequence, TypeVar

from .aio import AsyncClient, RequestLike, RetryStats
from .errors import ClientClosedError
from .judge import JudgeRequest, JudgeResult
from .session import AsyncSession
from .types import ExecRequest, ExecResult, FileContent, Isolation, Language, SessionInfo

T = TypeVar('T')


class Client:
    """The client of a fleet's public HTTP API, for plain (threaded) Python; same options as
    :class:`~sandfleet.aio.AsyncClient`."""

    def __init__(self, url: str = 'http://127.0.0.1:8080', **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name='sandfleet-client', daemon=True)
        self._thread.start()
        self._async = AsyncClient(url, **options)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.is_closed():
            coro.close()
            raise ClientClosedError('the client is closed')
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    @property
    def stats(self) -> RetryStats:
        """Calls, HTTP attempts and retries made."""
        return self._async.stats

    @property
    def coalesced(self) -> dict[str, int]:
        """Automatic batches and single requests sent."""
        return self._async.coalesced

    def execute(
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
        """Runs one call; see :meth:`AsyncClient.execute`."""
        return self._run(
            self._async.execute(
                code,
                language=language,
                stdin=stdin,
                timeout_ms=timeout_ms,
                memory_mb=memory_mb,
                files=files,
                fetch_files=fetch_files,
                isolation=isolation,
                request_id=request_id,
                deadline_s=deadline_s,
            )
        )

    def execute_request(self, request: ExecRequest, *, deadline_s: Optional[float] = None) -> ExecResult:
        """Runs one call from an :class:`ExecRequest`."""
        return self._run(self._async.execute_request(request, deadline_s=deadline_s))

    def execute_batch(self, requests: Sequence[RequestLike], *, deadline_s: Optional[float] = None) -> list[ExecResult]:
        """Runs many calls as explicit batches; results in request order."""
        return self._run(self._async.execute_batch(requests, deadline_s=deadline_s))

    def stream_batch(
        self, requests: Sequence[RequestLike], *, deadline_s: Optional[float] = None
    ) -> Iterator[tuple[int, ExecResult]]:
        """Yields ``(index, result)`` as each item of a streamed batch finishes."""
        stream = self._async.stream_batch(requests, deadline_s=deadline_s)
        try:
            while True:
                try:
                    yield self._run(stream.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            self._run(stream.aclose())

    def judge(self, code: str, **options: Any) -> JudgeResult:
        """Judges one program against its tests; see :meth:`AsyncClient.judge` (the same keyword arguments)."""
        return self._run(self._async.judge(code, **options))

    def judge_batch(self, requests: Sequence[JudgeRequest], *, deadline_s: Optional[float] = None) -> list[JudgeResult]:
        """Judges many; results in request order; see :meth:`AsyncClient.judge_batch`."""
        return self._run(self._async.judge_batch(requests, deadline_s=deadline_s))

    def session(
        self, *, language: Language = 'python', ttl_s: Optional[int] = None, memory_mb: Optional[int] = None
    ) -> 'Session':
        """A session, opened by ``with`` (or ``open()``) and closed at the block's end."""
        return Session(self, self._async.session(language=language, ttl_s=ttl_s, memory_mb=memory_mb))

    def close(self) -> None:
        """Closes the connections and the loop thread; safe to call twice."""
        if self._loop.is_closed():
            return
        self._run(self._async.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> 'Client':
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Session:
    """A fleet session for plain Python; ``with client.session() as s: s.execute('x = 1')``."""

    def __init__(self, client: Client, session: AsyncSession) -> None:
        self._client = client
        self._session = session

    @property
    def id(self) -> str:
        """The fleet's session id."""
        return self._session.id

    @property
    def state(self) -> str:
        """``new``, ``open``, ``lost`` (the fleet answered 410) or ``closed``."""
        return self._session.state

    @property
    def info(self) -> Optional[SessionInfo]:
        """What the fleet said when it opened the session."""
        return self._session.info

    def open(self) -> 'Session':
        """Creates the session on the fleet."""
        self._client._run(self._session.open())
        return self

    def execute(
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
        """Runs a cell in the session's state; see :meth:`AsyncSession.execute`."""
        return self._client._run(
            self._session.execute(
                code,
                stdin=stdin,
                timeout_ms=timeout_ms,
                files=files,
                fetch_files=fetch_files,
                request_id=request_id,
                deadline_s=deadline_s,
            )
        )

    def describe(self) -> SessionInfo:
        """The session as the fleet sees it now."""
        return self._client._run(self._session.describe())

    def close(self) -> None:
        """Deletes the session on the fleet; safe to call twice."""
        self._client._run(self._session.close())

    def __enter__(self) -> 'Session':
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
