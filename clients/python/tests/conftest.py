"""A real fleet for the tests: ``sandfleet serve`` (process backend: bubblewrap sandboxes, real
Python) started from this checkout on 127.0.0.1, a free port; its URL is read from its
"sandfleet serving" log line. Stopped (SIGTERM) when the tests end."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
from typing import Iterator

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

ROOT = pathlib.Path(__file__).resolve().parents[3]
BIN = ROOT / 'bin' / 'sandfleet.mjs'
NODE = os.environ.get('SANDFLEET_NODE', 'node')


class Fleet:
    """A running ``sandfleet serve``."""

    def __init__(self, *flags: str) -> None:
        self.process = subprocess.Popen(
            [
                NODE,
                '--no-node-snapshot',
                str(BIN),
                'serve',
                '--host',
                '127.0.0.1',
                '--port',
                '0',
                '--backend',
                'process',
                '--languages',
                'python',
                '--pool-size',
                '2',
                '--drain-timeout-ms',
                '1000',
                *flags,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        self.log: list[str] = []
        self.url = ''

    def ready(self) -> 'Fleet':
        """Waits for the serving line; then keeps reading the log so the pipe never fills."""
        self.url = self._wait_for_url()
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _wait_for_url(self) -> str:
        assert self.process.stdout is not None
        timer = threading.Timer(90, self.process.kill)
        timer.start()
        try:
            for line in self.process.stdout:
                self.log.append(line)
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if str(entry.get('msg', '')).startswith('sandfleet serving') and isinstance(entry.get('url'), str):
                    return entry['url']
        finally:
            timer.cancel()
        raise RuntimeError('sandfleet serve exited before serving:\n' + ''.join(self.log[-20:]))

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.append(line)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope='session')
def fleets() -> Iterator[tuple[Fleet, Fleet]]:
    """Two fleets started side by side: the default admission, and one that admits one call at a
    time and answers the rest 429 with Retry-After: 1."""
    started = [Fleet(), Fleet('--max-in-flight', '1', '--retry-after-s', '1')]
    try:
        yield started[0].ready(), started[1].ready()
    finally:
        for f in started:
            f.process.send_signal(signal.SIGTERM)
        for f in started:
            f.stop()


@pytest.fixture(scope='session')
def fleet(fleets: tuple[Fleet, Fleet]) -> Fleet:
    """A fleet with the default admission."""
    return fleets[0]


@pytest.fixture(scope='session')
def tight_fleet(fleets: tuple[Fleet, Fleet]) -> Fleet:
    """A fleet that admits one call at a time (429, Retry-After: 1, past it)."""
    return fleets[1]
