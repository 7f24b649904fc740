"""One session's processes: S holds the state and the connection, R (forked ahead of time) runs the next cell; a cell
that ends hands the session over to R, one that times out or dies is killed and S stays the session."""
import codecs
import os
import select
import signal
import time

from .libc import LIBC
from .limits import SOFT_STOP_S
from .frames import FrameError, cell_options, exec_job
from .cell import _dumps, _loads, refuse_cell, run_cell, warm_cell, write_all
from .sandbox_env import SANDBOX_KNOBS

PR_SET_PDEATHSIG = 1
# How long the next cell's process R waits for a frame before it exits (and S forks it anew
# when a frame comes): a session busy with cells keeps R ready, an idle one costs one process less.
SPARE_IDLE_S = float(os.environ.get(SANDBOX_KNOBS["session_spare_idle_s"], "10"))
_prctl = LIBC.prctl
# A streamed cell's output is sent at most this often, or once this much of it waits: a print loop makes few frames.
STREAM_FLUSH_S = 0.03
STREAM_FLUSH_BYTES = 65536


class OutputStream:
    """A streamed cell's output as S keeps it (within the cap), sent to the runner as `output` frames in the order it
    was read (`{"op": "output", "id", "stream": "stdout" | "stderr", "text"}`), coalesced: sent once its oldest byte
    waited STREAM_FLUSH_S, or once STREAM_FLUSH_BYTES wait. Each stream is decoded as UTF-8 across its chunks (a
    character split between two reads is sent whole)."""

    def __init__(self, wfile, frame_id, names):
        self.wfile, self.frame_id, self.names = wfile, frame_id, names
        self.decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in names}
        self.pending = []  # [fd, bytearray], runs of one stream in the order they were read
        self.size = 0
        self.since = None

    def take(self, fd, data):
        if not data:
            return
        if self.pending and self.pending[-1][0] == fd:
            self.pending[-1][1] += data
        else:
            self.pending.append([fd, bytearray(data)])
        self.size += len(data)
        if self.since is None:
            self.since = time.monotonic()

    def due(self):
        """Seconds until what waits is sent (0: now); None when nothing waits."""
        if self.since is None:
            return None
        if self.size >= STREAM_FLUSH_BYTES:
            return 0
        return max(0, self.since + STREAM_FLUSH_S - time.monotonic())

    def flush(self, final=False):
        """Sends what waits; `final`: the cell is over, each decoder's rest too."""
        frames = []
        for fd, data in self.pending:
            text = self.decoders[fd].decode(bytes(data))
            if text:
                frames.append(self.frame(fd, text))
        if final:
            for fd, decoder in self.decoders.items():
                text = decoder.decode(b"", True)
                if text:
                    frames.append(self.frame(fd, text))
        self.pending, self.size, self.since = [], 0, None
        if frames:
            self.wfile.write("".join(frames).encode())
            self.wfile.flush()

    def frame(self, fd, text):
        return '{"op": "output", "id": %s, "stream": "%s", "text": %s}\n' % (
            _dumps(self.frame_id),
            self.names[fd],
            _dumps(text),
        )


def drain(fds, capped, deadline, cap, last, bufs=None, cut=None, stream=None):
    """Reads fds until EOF on all or the deadline; keeps at most cap bytes of each fd in capped.
    Once `last` (the result pipe) is at EOF the cell is over: what the others hold now is read,
    and a process the cell left running with them open is not waited for. `bufs` and `cut`: what
    an earlier drain of the same fds read, to go on with. `stream` (an OutputStream): what is kept
    of the capped fds is also sent as it comes."""
    bufs = bufs if bufs is not None else {fd: bytearray() for fd in fds}
    cut = cut if cut is not None else {fd: False for fd in fds}
    open_fds = list(fds)
    done = False
    sweeps = 0
    while open_fds:
        left = 0 if done else deadline - time.monotonic()
        if left <= 0 and not done:
            return bufs, cut, True
        due = None if stream is None else stream.due()
        if due is not None and due < left:
            ready, _, _ = select.select(open_fds, [], [], due)
            if not ready:
                stream.flush()
                continue
        else:
            ready, _, _ = select.select(open_fds, [], [], left)
        if done:
            sweeps += 1
            if not ready or sweeps > 64:  # a process left behind may write for ever: take what is there
                break
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                done = done or fd == last
                continue
            if fd not in capped:
                bufs[fd] += chunk
                continue
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
                if stream is not None:
                    stream.take(fd, chunk[:room])
            if len(chunk) > room:
                cut[fd] = True
        if stream is not None and stream.due() == 0:
            stream.flush()
    return bufs, cut, False


class Session:
    """The state and the connection of one session, in whichever process holds it now."""

    def __init__(self, conn, isolated, workdir, places):
        self.rfile = conn.makefile("rb")
        self.wfile = conn.makefile("wb")
        self.isolated, self.workdir, self.places = isolated, workdir, places
        self.g = {"__name__": "__main__", "__builtins__": __builtins__}
        self.n = 0
        # The code contexts beside the default one (`self.g`): each its own globals and working directory.
        self.contexts = {}

    def serve(self):
        """The session loop in S; returns never (exits when the connection or the session ends)."""
        while True:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            res_r, res_w = os.pipe()
            ctl_r, ctl_w = os.pipe()
            go_r, go_w = os.pipe()
            me = os.getpid()
            pid = os.fork()
            if pid == 0:
                for fd in (out_r, err_r, res_r, ctl_r, go_w):
                    os.close(fd)
                self.runner(me, out_w, err_w, res_w, ctl_w, go_r)
                continue  # R took over: it is S now
            for fd in (out_w, err_w, res_w, ctl_w, go_r):
                os.close(fd)
            warm_supervisor()
            self.supervise(pid, out_r, err_r, res_r, ctl_r, go_w)

    def runner(self, parent, out_w, err_w, res_w, ctl_w, go_r):
        """R: waits for a frame, runs it; returns when it became the session."""
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(0)
        os.setpgid(0, 0)
        conn_fd = self.rfile.fileno()
        # A frame already waiting (the first cell after an idle spell): no time to warm up.
        if not select.select([conn_fd], [], [], 0)[0]:
            warm_cell()
            if not select.select([conn_fd], [], [], SPARE_IDLE_S)[0]:
                # Idle: this spare process goes, so an idle session holds only S (and its init).
                write_all(ctl_w, b"idle\n")
                os._exit(0)
        line = self.rfile.readline()
        if not line:
            os._exit(0)
        options = None
        stream = False
        try:
            frame = _loads(line)
            if type(frame) is dict and frame.get("op") == "cell":  # the cell's options, then its exec frame
                exec_line = self.rfile.readline()
                options = cell_options(frame)
                stream = options.stream
                frame = _loads(exec_line) if exec_line else None
            if type(frame) is not dict or frame.get("op") != "exec":
                os._exit(0)  # `close`: the session ends
            job = exec_job(frame)
        except ValueError as e:  # not JSON, or a FrameError: refused, answered, the session as it was
            job, refused = None, e if isinstance(e, FrameError) else FrameError("a frame that is not JSON")
        head = (
            [1000, 0, refused.frame_id, False]
            if job is None
            else [job.timeout_ms, job.max_output_bytes, job.id, stream]
        )
        write_all(ctl_w, (_dumps(head) + "\n").encode())
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        if job is None:
            refuse_cell(refused, res_w)
        elif options is not None:
            self.n += 1
            self.run_in_context(options, job, res_w)
        else:
            self.n += 1
            run_cell(job, self.g, self.n, res_w, self.workdir, self.places)
        go = os.read(go_r, 1)
        os.close(go_r)
        if go != b"g":
            os._exit(0)
        _prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
        os.write(ctl_w, b"k")
        os.close(ctl_w)

    def run_in_context(self, options, job, res_w):
        """Runs a cell as its options (frames.CellOptions) say: in a code context (its globals and working directory,
        made fresh the first time it is named; those in `forget` dropped first), with `env` set in the environment for
        this cell only, and its value's display marked with `main_key`."""
        for key in options.forget:
            self.contexts.pop(key, None)
        key = options.context
        if key is None:
            g, state = self.g, {}
        else:
            state = self.contexts.get(key)
            if state is None:
                g = {"__name__": "__main__", "__builtins__": __builtins__}
                state = self.contexts[key] = {"g": g, "cwd": options.cwd}
            g = state["g"]
        if state.get("cwd"):
            try:
                os.chdir(state["cwd"])
            except OSError:
                pass
        saved = {}
        for name, value in options.env.items():
            saved[name] = os.environ.get(name)
            os.environ[name] = value
        try:
            run_cell(job, g, self.n, res_w, self.workdir, self.places, options.main_key, options.stream)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if key is not None:
                try:
                    state["cwd"] = os.getcwd()
                except OSError:
                    pass

    def supervise(self, pid, out_r, err_r, res_r, ctl_r, go_w):
        """S: waits for R to start a cell, drains it, answers; exits when R took over."""
        head = b""
        while not head.endswith(b"\n"):
            chunk = os.read(ctl_r, 4096)
            if not chunk:  # R ended without a cell: the connection closed or the session was closed
                os._exit(0)
            head += chunk
        if head == b"idle\n":
            os.waitpid(pid, 0)
            for fd in (out_r, err_r, res_r, ctl_r, go_w):
                os.close(fd)
            select.select([self.rfile.fileno()], [], [])  # the next frame (or the end) forks the next R
            return
        started = time.monotonic()
        timeout_ms, cap, frame_id, streamed = _loads(head)
        stream = OutputStream(self.wfile, frame_id, {out_r: "stdout", err_r: "stderr"}) if streamed else None
        fds, capped = [out_r, err_r, res_r], (out_r, err_r)
        bufs, cut, timed_out = drain(fds, capped, started + timeout_ms / 1000, cap, res_r, stream=stream)
        if timed_out:  # the soft stop: a handler of the cell's own may print and end; what it writes is kept
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
            drain(fds, capped, time.monotonic() + SOFT_STOP_S, cap, res_r, bufs, cut, stream)
        for fd in (out_r, err_r, res_r):
            os.close(fd)
        if stream is not None:  # every output frame before the result's
            stream.flush(True)
        raw = bytes(bufs[res_r]) if not timed_out else b""
        head = result_head(bufs[out_r], bufs[err_r], cut[out_r], cut[err_r], started)
        if raw.startswith(b"{") and raw.endswith(b"}"):
            self.wfile.write(result_line(head, "" if self.isolated else ', "pid": %d' % pid, raw))
            self.wfile.flush()
            os.write(go_w, b"g")
            os.read(ctl_r, 1)  # R cleared its death signal: it holds the session now
            os._exit(0)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, st = os.waitpid(pid, 0)
        os.close(go_w)
        os.close(ctl_r)
        status = "timeout" if timed_out else "killed"
        sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else None
        rest = {
            "id": frame_id,
            "status": status,
            "exit_code": None if sig else os.WEXITSTATUS(st),
            "display": [],
            "files": {},
            "error": {
                "type": status,
                "message": "the cell passed its timeout; the session keeps its state from before the cell"
                if timed_out
                else "the cell's process died (signal %s); the session keeps its state from before the cell" % sig,
            },
        }
        if not self.isolated:
            rest["pid"] = os.getpid()
        self.wfile.write(("%s, %s\n" % (head, _dumps(rest)[1:])).encode())
        self.wfile.flush()


def result_head(out, err, cut_out, cut_err, started):
    """The opening of a result frame: the output S read and the time the cell took."""
    return (
        '{"op": "result", "stdout": %s, "stderr": %s, "duration_ms": %s, "truncated": {"stdout": %s, "stderr": %s}'
        % (
            _dumps(out.decode("utf-8", "replace")),
            _dumps(err.decode("utf-8", "replace")),
            repr((time.monotonic() - started) * 1000),
            "true" if cut_out else "false",
            "true" if cut_err else "false",
        )
    )


def result_line(head, pid_part, raw):
    """A whole result frame: the head, then the fields of R's result object as R wrote them."""
    return ("%s%s, %s\n" % (head, pid_part, raw[1:].decode())).encode()


def warm_supervisor():
    """In S right after it forked R: walks S's answering path once on a throwaway pipe, so that
    its copy-on-write page faults come before the cell, not between cell and answer."""
    fds = []
    for data in (b"", b"", b'{"x": 1}'):
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        fds.append(r)
    a, b, r = fds
    _loads('[10000, 1048576, "", false]')
    started = time.monotonic()
    bufs, cut, _ = drain(fds, (a, b), started + 1, 1 << 20, r)
    for fd in fds:
        os.close(fd)
    raw = bytes(bufs[r])
    if raw.startswith(b"{") and raw.endswith(b"}"):
        result_line(result_head(bufs[a], bufs[b], cut[a], cut[b], started), ', "pid": %d' % 1, raw)
