"""sandfleet session host: keeps stateful Python sessions, forking before every cell.

Runs inside the sandbox. The runner writes NDJSON frames on stdin:
  {"op": "open", "sid": ...}   -> forks a session process listening on <sockdir>/<sid>.sock,
                                  answers {"op": "opened", "sid", "pid", "socket"} on stdout
  {"op": "kill", "pid": N}     -> kills the process holding a session (pids are the host's own,
                                  which differ from the runner's when the host has a pid namespace)
  {"op": "shutdown"}           -> exits
Each session then talks NDJSON over its own Unix socket (one connection):
  {"op": "exec", "id", "code", "stdin", "timeout_ms", "memory_mb", "files", "fetch_files",
   "max_output_bytes"} -> {"op": "result", "id", "status", "stdout", "stderr", "exit_code",
   "duration_ms", "truncated", "error", "display", "files", "pid"}
Fork per cell: the session process P forks the cell's child C, which runs the cell in P's state.
When the cell ends (ok or raised), C becomes the session and P exits; when the cell passes its
timeout (or C dies), P kills C's process group and stays the session: the state before the cell
survives. `pid` in each result is the process holding the session now.
"""
import ast
import base64
import json
import linecache
import os
import resource
import select
import signal
import socket
import sys
import tempfile
import time
import traceback

DEVNULL = os.open(os.devnull, os.O_RDWR)


def send(stream, frame):
    stream.write((json.dumps(frame) + "\n").encode())
    stream.flush()


def run_code(code, g, n):
    """Runs one cell in globals g; returns (status, exit_code, error, display)."""
    name = "<cell %d>" % n
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    try:
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), g)
        display = []
        if last is not None:
            value = eval(compile(last, name, "eval"), g)
            if value is not None:
                g["_"] = value
                display = [{"text/plain": repr(value)}]
        return "ok", 0, None, display
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return "ok", 0, None, []
        if isinstance(e.code, int):
            return "error", e.code, {"type": "SystemExit", "message": str(e.code)}, []
        print(e.code, file=sys.stderr)
        return "error", 1, {"type": "SystemExit", "message": str(e.code)}, []
    except MemoryError:
        print("MemoryError", file=sys.stderr)
        return "memory", None, {"type": "MemoryError", "message": "the cell ran out of memory"}, []
    except BaseException as e:  # noqa: BLE001 - the user's exception, reported
        tb = e.__traceback__
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell"):
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(e), e, tb))
        sys.stderr.write(text)
        return "error", 1, {"type": type(e).__name__, "message": str(e), "traceback": text}, []


def drain(fds, deadline, cap):
    """Reads fds until EOF on all or the deadline; keeps at most cap bytes of each."""
    bufs = {fd: bytearray() for fd in fds}
    cut = {fd: False for fd in fds}
    open_fds = list(fds)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            return bufs, cut, True
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
            if len(chunk) > room:
                cut[fd] = True
    return bufs, cut, False


def cell(conn_w, frame, g, n):
    """Runs one cell forked from this process. Returns True when the caller must keep serving."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    go_r, go_w = os.pipe()
    stdin_file = tempfile.TemporaryFile()
    stdin_file.write(frame.get("stdin", "").encode())
    stdin_file.seek(0)
    for path, b64 in (frame.get("files") or {}).items():
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(b64))
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        for fd in (out_r, err_r, res_r, go_w):
            os.close(fd)
        os.dup2(stdin_file.fileno(), 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        mem = int(frame.get("memory_mb", 512)) * 1024 * 1024
        try:
            with open("/proc/self/statm") as f:
                size = int(f.read().split()[0]) * resource.getpagesize()
            resource.setrlimit(resource.RLIMIT_AS, (size + mem, hard))
        except (OSError, ValueError):
            pass
        status, code, error, display = run_code(frame.get("code", ""), g, n)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        files = {}
        for path in frame.get("fetch_files") or []:
            try:
                with open(path, "rb") as f:
                    files[path] = base64.b64encode(f.read()).decode()
            except OSError:
                pass
        os.dup2(DEVNULL, 0)
        os.dup2(DEVNULL, 1)
        os.dup2(DEVNULL, 2)
        os.close(out_w)
        os.close(err_w)
        with os.fdopen(res_w, "w") as w:
            json.dump({"status": status, "exit_code": code, "error": error, "display": display, "files": files}, w)
        go = os.read(go_r, 1)
        os.close(go_r)
        if go != b"g":
            os._exit(0)
        return True  # this child is the session now
    for fd in (out_w, err_w, res_w, go_r):
        os.close(fd)
    stdin_file.close()
    timeout = frame.get("timeout_ms", 10000) / 1000
    cap = int(frame.get("max_output_bytes", 1 << 20))
    bufs, cut, timed_out = drain([out_r, err_r], started + timeout, cap)
    raw = b""
    if not timed_out:
        with os.fdopen(res_r, "rb") as r:
            raw = r.read()
    else:
        os.close(res_r)
    os.close(out_r)
    os.close(err_r)
    result = None
    if raw:
        result = json.loads(raw)
    base = {"op": "result", "id": frame.get("id"), "stdout": bufs[out_r].decode("utf-8", "replace"),
            "stderr": bufs[err_r].decode("utf-8", "replace"), "duration_ms": (time.monotonic() - started) * 1000,
            "truncated": {"stdout": cut[out_r], "stderr": cut[err_r]}}
    if result is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, st = os.waitpid(pid, 0)
        os.close(go_w)
        status = "timeout" if timed_out else "killed"
        sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else None
        base.update(status=status, exit_code=None if sig else os.WEXITSTATUS(st), display=[], files={}, pid=os.getpid(),
                    error={"type": status, "message": "the cell passed its timeout; the session keeps its state from before the cell"
                           if timed_out else "the cell's process died (signal %s); the session keeps its state from before the cell" % sig})
        send(conn_w, base)
        return True
    base.update(result, pid=pid)
    send(conn_w, base)
    os.write(go_w, b"g")
    os._exit(0)


def session_main(srv):
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.chdir(tempfile.mkdtemp(prefix="sf-session-"))
    conn, _ = srv.accept()
    srv.close()
    rfile = conn.makefile("rb")
    wfile = conn.makefile("wb")
    g = {"__name__": "__main__", "__builtins__": __builtins__}
    n = 0
    while True:
        line = rfile.readline()
        if not line:
            os._exit(0)
        frame = json.loads(line)
        if frame.get("op") == "close":
            os._exit(0)
        if frame.get("op") == "exec":
            n += 1
            cell(wfile, frame, g, n)


def main():
    sockdir = sys.argv[1]
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(DEVNULL, 1)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    for mod in os.environ.get("SANDFLEET_SESSION_PRELOAD", "").split(","):
        if mod:
            try:
                __import__(mod)
            except ImportError:
                pass
    send(channel, {"op": "ready", "pid": os.getpid()})
    for line in sys.stdin.buffer:
        frame = json.loads(line)
        if frame.get("op") == "shutdown":
            return
        if frame.get("op") == "kill":
            pid = int(frame.get("pid") or 0)
            if pid > 1 and pid != os.getpid():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            continue
        if frame.get("op") == "open":
            path = os.path.join(sockdir, frame["sid"] + ".sock")
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind(path)
            srv.listen(1)
            pid = os.fork()
            if pid == 0:
                sys.stdin.close()
                channel.close()
                session_main(srv)
                os._exit(0)
            srv.close()
            send(channel, {"op": "opened", "sid": frame["sid"], "pid": pid, "socket": path})


if __name__ == "__main__":
    main()
