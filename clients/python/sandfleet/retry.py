"""How calls are retried: only the fleet's retriable statuses, with exponential backoff and
full jitter, never sooner than the fleet's ``Retry-After``, never past the call's deadline."""
from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts per call (the first included) and the delays between them, in seconds."""

    max_attempts: int = 6
    base_delay_s: float = 0.05
    max_delay_s: float = 2.0


def backoff_delay_s(
    policy: RetryPolicy, retry: int, retry_after_s: float = 0.0, draw: Callable[[], float] = random.random
) -> float:
    """Delay before retry number ``retry`` (1 for the first): uniform in [0, min(max, base·2^(retry-1))], at least
    ``retry_after_s``."""
    cap = min(policy.max_delay_s, policy.base_delay_s * 2 ** max(0, retry - 1))
    return max(retry_after_s, draw() * cap)


def parse_retry_after_s(value: Optional[str], now: Optional[float] = None) -> float:
    """A ``Retry-After`` header (seconds or an HTTP date) in seconds; 0 when absent or malformed."""
    if value is None or value.strip() == '':
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, when - (time.time() if now is None else now))
