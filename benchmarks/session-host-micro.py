"""Session host micro-benchmark: cells `x += 1` sent straight to session_host.py over its Unix
socket (no node, no HTTP), several hosts interleaved cell by cell so a shared machine's load falls
on all alike. Prints latency percentiles and the CPU per cell of the session processes (they are
reaped here: this process is their child subreaper).

Usage: python3 benchmarks/session-host-micro.py [--cells 400] [--gap-ms 2] HOST.py [HOST.py ...]
  e.g. git show <old>:sandbox-images/python/session_host.py > /tmp/old.py, then
       python3 benchmarks/session-host-micro.py /tmp/old.py sandbox-images/python/session_host.py
"""
import argparse
import ctypes
import json
import os
import resource
import socket
import subprocess
import tempfile
import time

FRAME = {
    "op": "exec",
    "id": "",
    "code": "x += 1",
    "stdin": "",
    "timeout_ms": 10000,
    "memory_mb": 512,
    "files": {},
    "fetch_files": [],
    "max_output_bytes": 1 << 20,
    "isolation": "fork",
    "wait_ms": None,
    "tenant": None,
}


def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=400)
    ap.add_argument(
        "--gap-ms", type=float, default=2.0, help="pause before each cell (an HTTP client is not instant either)"
    )
    ap.add_argument("hosts", nargs="+")
    args = ap.parse_args()
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    conns, procs = [], []
    for host in args.hosts:
        d = tempfile.mkdtemp()
        p = subprocess.Popen(["/usr/bin/python3", "-I", host, d], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        json.loads(p.stdout.readline())
        p.stdin.write(b'{"op": "open", "sid": "bench"}\n')
        p.stdin.flush()
        opened = json.loads(p.stdout.readline())
        s = socket.socket(socket.AF_UNIX)
        s.connect(opened["socket"])
        conns.append((s, s.makefile("rb")))
        procs.append(p)
    line = (json.dumps(FRAME) + "\n").encode()
    for s, f in conns:
        s.sendall(line.replace(b"x += 1", b"x = 0"))
        f.readline()
    times = [[] for _ in conns]
    cpu = [0.0 for _ in conns]
    for _ in range(args.cells):
        for i, (s, f) in enumerate(conns):
            time.sleep(args.gap_ms / 1000)
            reap()
            c0 = cpu_children()
            t = time.perf_counter()
            s.sendall(line)
            f.readline()
            times[i].append((time.perf_counter() - t) * 1000)
            # The cell's processes finish (the old session process exits) just after the answer.
            time.sleep(0.002)
            reap()
            cpu[i] += cpu_children() - c0
    print(
        "machine: %d cores, load average %.2f; %d cells each, %.1f ms gap"
        % (os.cpu_count(), os.getloadavg()[0], args.cells, args.gap_ms)
    )
    for host, xs, c in zip(args.hosts, times, cpu):
        xs.sort()
        n = len(xs)
        print(
            "%-50s p10 %.3f  p50 %.3f  p90 %.3f ms; CPU per cell %.3f ms"
            % (host, xs[n // 10], xs[n // 2], xs[int(n * 0.9)], c * 1000 / n)
        )
    for p in procs:
        p.stdin.write(b'{"op": "shutdown"}\n')
        p.stdin.flush()


if __name__ == "__main__":
    main()
