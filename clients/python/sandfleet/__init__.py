"""sandfleet: the Python client of a sandfleet fleet (sandboxed code execution for agentic RL).

    from sandfleet import Client
    with Client('http://127.0.0.1:8080') as fleet:
        r = fleet.execute('print(6 * 7)')
        print(r.status, r.stdout)          # ok 42

``AsyncClient`` is the same for asyncio. Every call returns an :class:`ExecResult`; its ``status``
is one of a closed set, and :func:`is_retriable` says the fleet (not the code) was at fault.
``fleet.judge(code, tests=[...])`` judges a program against its tests: a :class:`JudgeResult`
whose ``verdict`` blames the program, the fleet (retried) or the caller.
"""
from .aio import AsyncClient, RetryStats
from .client import Client, Session
from .errors import ClientClosedError, SandfleetError, SessionClosedError, SessionLostError, SessionRequestError
from .judge import (
    VERDICTS,
    CompileResult,
    JudgeRequest,
    JudgeResult,
    TestResult,
    is_retriable_verdict,
    judge_request,
)
from .retry import RetryPolicy
from .session import AsyncSession
from .types import (
    FLEET_STATUSES,
    REQUEST_STATUSES,
    STATUSES,
    USER_STATUSES,
    ExecError,
    ExecRequest,
    ExecResult,
    Isolation,
    SessionInfo,
    Status,
    Truncated,
    exec_request,
    is_retriable,
    is_tool_error,
    is_user_status,
    may_have_run,
)

__version__ = '0.1.0'

__all__ = [
    'AsyncClient',
    'AsyncSession',
    'Client',
    'ClientClosedError',
    'CompileResult',
    'ExecError',
    'ExecRequest',
    'ExecResult',
    'FLEET_STATUSES',
    'Isolation',
    'JudgeRequest',
    'JudgeResult',
    'REQUEST_STATUSES',
    'RetryPolicy',
    'RetryStats',
    'STATUSES',
    'SandfleetError',
    'Session',
    'SessionClosedError',
    'SessionInfo',
    'SessionLostError',
    'SessionRequestError',
    'Status',
    'TestResult',
    'Truncated',
    'USER_STATUSES',
    'VERDICTS',
    'exec_request',
    'judge_request',
    'is_retriable',
    'is_retriable_verdict',
    'is_tool_error',
    'is_user_status',
    'may_have_run',
]
