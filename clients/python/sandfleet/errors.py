"""Errors of the client. Fleet and code statuses are never raised: they arrive as results.
These are for what has no result to carry it. Each has a stable ``code`` (docs/errors.md)."""
from __future__ import annotations

from typing import Optional

from .types import ExecResult


class SandfleetError(Exception):
    """Base of the client's errors; ``code`` is stable, ``result`` the last result seen, if any."""

    code = 'SF_ERR_CLIENT'

    def __init__(self, message: str, result: Optional[ExecResult] = None) -> None:
        super().__init__(message)
        self.result = result


class ClientClosedError(SandfleetError):
    """The client was closed; it takes no new call."""

    code = 'SF_ERR_CLIENT_CLOSED'


class SessionLostError(SandfleetError):
    """The fleet answered HTTP 410: the session's runner or sandbox died and its state is gone. The fleet's fault
    (status ``infra_error``), never the code's: open a new session and run its cells again."""

    code = 'SF_ERR_CLIENT_SESSION_LOST'


class SessionClosedError(SandfleetError):
    """The session was closed by this program (``close()`` or the end of its ``with`` block)."""

    code = 'SF_ERR_CLIENT_SESSION_CLOSED'


class SessionRequestError(SandfleetError):
    """A session could not be created or described; ``result`` carries the fleet's answer."""

    code = 'SF_ERR_CLIENT_SESSION_REQUEST'
