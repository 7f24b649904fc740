"""sandfleet session host: keeps stateful Python sessions, forking before every cell.

Runs inside the sandbox. The runner writes NDJSON frames on stdin:
  {"op": "open", "sid": ...}   -> forks a session listening on <sockdir>/<sid>.sock, answers
                                  {"op": "opened", "sid", "pid", "socket", "isolated"} on stdout
                                  (or {"op": "opened", "sid", "error"}); with "agent": true also
                                  an agent (agent.py: the session's files and processes) on
                                  <sockdir>/<sid>.agent.sock ("agent_socket" in "opened"), and
                                  "env" (set in the session's environment), "home" (its working
                                  directory and HOME, where the session has it as a private
                                  place), "memory_mb" (its processes' limit)
  {"op": "kill", "pid": N}     -> kills the process holding a session (pids are the host's own,
                                  which differ from the runner's when the host has a pid namespace);
                                  with it every process of the session (see kill_session)
  {"op": "shutdown"}           -> exits
Each session then talks NDJSON over its own Unix socket (one connection; the socket's path is
unlinked once the runner is connected):
  {"op": "exec", "id", "code", "stdin", "timeout_ms", "memory_mb", "files", "fetch_files",
   "max_output_bytes", "isolation", "wait_ms", "tenant"} (the executor's exec frame, parsed once by
   frames.exec_job; one it refuses is answered status infra_error, BadFrame, and nothing runs)
   -> {"op": "result", "id", "status", "stdout", "stderr", "exit_code", "duration_ms",
   "truncated", "error", "display", "files", "pid"}
  {"op": "close"}              -> the session ends

Isolation of one session from the others (`isolated`): with SANDFLEET_SESSION_NAMESPACES=1 (the
process driver sets it) and where the kernel lets an unprivileged process make namespaces (inside
bubblewrap it does), each session gets its own user, mount, pid,
IPC and network namespaces. Its first process there (pid 1, "init") mounts its own /proc (only
its processes), a fresh tmpfs on /tmp (its work dir), /mnt, /dev/shm and /home/user, hides the socket directory,
and reaps (with an agent, the init is the agent, and leaves when the runner closes the agent's
socket). `pid` in "opened" is then that init's (killing it ends every process of the session)
and results carry no `pid`. An isolated session holds at most SANDFLEET_SESSION_MAX_PROCS (512)
processes (RLIMIT_NPROC, counted in its own user namespace). Without namespaces the session runs
as a plain process and `pid` in each result is the process holding the session now.

Fork per cell, with the next cell's process forked ahead of time: the session process S holds
the state; right after it becomes the session it forks R, which waits for the next frame on the
socket, reads it, tells S (timeout, cap) over a pipe and runs the cell with fd 0/1/2 on a memfd
and pipes. S drains the output pipes (capped) and the result pipe, and answers. When the cell
ended (ok or raised), R becomes the session (S hands over and exits) and forks the next R. When
the cell passes its timeout, or R dies, S kills R's process group and stays the session: the
state before the cell survives. R dies with S (PR_SET_PDEATHSIG) until it takes over. An R that
waited SANDFLEET_SESSION_SPARE_IDLE_S (10) seconds for a frame exits; S forks the next one when a
frame comes (that cell then pays for the fork).

Built from the modules of sandbox-images/python/sandfleet_sandbox/ by build.py, this module last.
"""
import ctypes
import gc
import io
import json
import os
import resource
import signal
import socket
import sys
import tempfile
import warnings

from .libc import LIBC, prctl
from .cell import DEVNULL, _dumps, write_all
from .session import Session
from .agent import Agent
from .sandbox_env import SANDBOX_ENV, SANDBOX_KNOBS

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
PR_SET_DUMPABLE = 4
# Looked up once here, so the sessions share these function objects instead of each making its own.
_unshare, _mount = LIBC.unshare, LIBC.mount


def send(stream, frame):
    stream.write((_dumps(frame) + "\n").encode())
    stream.flush()


def unshare_session():
    """Gives this process new user, mount, pid, IPC and network namespaces; True when it could."""
    uid, gid = os.getuid(), os.getgid()
    if _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS) != 0:
        return False
    try:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write("%d %d 1" % (uid, uid))
        with open("/proc/self/gid_map", "w") as f:
            f.write("%d %d 1" % (gid, gid))
    except OSError:
        return False
    return True


def mount(source, target, fstype, flags=0, data=None):
    if (
        _mount(
            source.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            flags,
            None if data is None else data.encode(),
        )
        != 0
    ):
        raise OSError(ctypes.get_errno(), "mount %s on %s" % (fstype, target))


# The dirs an isolated session gets as its own fresh tmpfs: with its work dir (in /tmp), where its
# cells may write a request's files and fetch them from. /home/user, where the sandbox has it (the process driver
# makes it), is a sandbox session's home.
PRIVATE_DIRS = ("/tmp", "/mnt", "/dev/shm", "/home/user")
SESSION_MAX_PROCS = int(os.environ.get(SANDBOX_KNOBS["session_max_procs"], "512"))


def init_main(srv, path, sockdir, ready_w, opts):
    """pid 1 of a session's namespaces: private /proc, /tmp, /mnt, /dev/shm and /home/user; then the session; then
    reaps, or is the session's agent."""
    ok = b"1"
    dirfd = os.open(sockdir, os.O_RDONLY | os.O_DIRECTORY)  # the socket's directory, also once covered
    try:
        mount("none", "/", None, MS_REC | MS_PRIVATE)
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
        for d in PRIVATE_DIRS:
            if os.path.isdir(d):
                mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
        resource.setrlimit(resource.RLIMIT_NPROC, (SESSION_MAX_PROCS, SESSION_MAX_PROCS))
    except (OSError, ValueError):
        ok = b"0"
    # Not dumpable from here on (and so neither the session nor its cells, forked from this one): a
    # cell, the same uid, can then neither ptrace nor open /proc/PID/mem of this init or of the
    # session process that holds the state and the cell's deadline. After the mounts: the uid map
    # was written while /proc/self was still this uid's.
    prctl(PR_SET_DUMPABLE, 0)
    os.write(ready_w, ok)
    os.close(ready_w)
    conn, _ = srv.accept()
    srv.close()
    agent = accept_agent(opts, dirfd)
    try:
        os.unlink(os.path.basename(path), dir_fd=dirfd)
    except OSError:
        pass
    os.close(dirfd)
    if ok == b"1" and not os.path.realpath(sockdir).startswith("/tmp/"):
        try:
            mount("tmpfs", sockdir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=4k")
        except OSError:
            pass
    # Reaped here, not by the kernel (the host ignores SIGCHLD): the session's CPU time then adds
    # up in this process's children's times, where the fleet's accounting sees it.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    home = sandbox_environ(opts, ok == b"1")
    pid = os.fork()
    if pid == 0:
        if agent is not None:
            agent.close()
        session_main(conn, ok == b"1", home)
    conn.close()
    if agent is not None:  # the agent reaps too; it leaves (and the namespace with it) when the runner closes it
        Agent(agent, home or os.getcwd(), places_of(home, ok == b"1"), dict(os.environ), memory_of(opts)).serve()
        os._exit(0)
    # Every process of the session is this one's child or is reparented to it: it ends when none is left.
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue


def session_main(conn, isolated, home=None):
    prctl(PR_SET_DUMPABLE, 0)  # a session without namespaces too (see init_main)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    workdir = home or tempfile.mkdtemp(prefix="sf-session-")
    os.chdir(workdir)
    Session(conn, isolated, workdir, places_of(workdir, isolated)).serve()
    os._exit(0)


def places_of(workdir, isolated):
    """Where a session's files may be written: its work dir, and its private dirs when it has them."""
    private = [d for d in PRIVATE_DIRS if d != workdir and os.path.isdir(d)] if isolated else []
    return [workdir, *private] if workdir else private


def memory_of(opts):
    """A sandbox's memory_mb, as the runner sends it with its open frame (every sandbox's has it)."""
    return int(opts["memory_mb"])


def sandbox_environ(opts, isolated):
    """A sandbox session's environment (the open frame's `env`, HOME, USER) set in this process, for the session and
    the agent to inherit; answers its home: the open frame's when it is a private place here, else None (a work dir of
    its own in /tmp)."""
    home = opts.get("home")
    home = home if isolated and home in PRIVATE_DIRS and os.path.isdir(home) else None
    if opts.get("agent"):
        os.environ.update({str(k): str(v) for k, v in (opts.get("env") or {}).items()})
        os.environ["USER"] = "user"
        if home:
            os.environ["HOME"] = home
    return home


def accept_agent(opts, dirfd):
    """The agent's connection, when the session has one (the runner connects once the session is opened)."""
    srv = opts.get("agent_srv")
    if srv is None:
        return None
    conn, _ = srv.accept()
    srv.close()
    try:
        os.unlink(os.path.basename(opts["agent_path"]), dir_fd=dirfd)
    except OSError:
        pass
    return conn


def open_session(srv, path, sockdir, report_w, opts):
    """In the host's child: namespaces where possible, then the session. Reports "PID ISOLATED"."""
    os.setsid()
    if os.environ.get(SANDBOX_ENV["session_namespaces"]) == "1" and unshare_session():
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            os.close(report_w)
            init_main(srv, path, sockdir, ready_w, opts)
            os._exit(0)
        os.close(ready_w)
        ok = os.read(ready_r, 1) == b"1"
        write_all(report_w, b"%d %d" % (pid, 1 if ok else 0))
        os._exit(0)
    write_all(report_w, b"%d 0" % os.getpid())
    os.close(report_w)
    conn, _ = srv.accept()
    srv.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    dirfd = os.open(sockdir, os.O_RDONLY | os.O_DIRECTORY)
    agent = accept_agent(opts, dirfd)
    os.close(dirfd)
    if agent is not None:  # a process of its own beside the session, in the session's Unix session
        sandbox_environ(opts, False)
        workdir = tempfile.mkdtemp(prefix="sf-session-")
        if os.fork() == 0:
            conn.close()
            prctl(PR_SET_DUMPABLE, 0)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            Agent(agent, workdir, [workdir], dict(os.environ), memory_of(opts)).serve()
            os._exit(0)
        agent.close()
        session_main(conn, False, workdir)
    session_main(conn, False)


def listening(path):
    """A Unix socket bound at `path`, listening for its one connection."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    return srv


def kill_session(pid, plain):
    """Kills the process holding a session; for a session without namespaces, also every process
    of its Unix session (what its cells left running), since no init takes them down with it."""
    try:
        sid = os.getsid(pid)
    except OSError:
        sid = None
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    if sid not in plain:
        return
    plain.discard(sid)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if os.getsid(int(name)) == sid:
                    os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def main():
    sockdir = sys.argv[1]
    channel = os.fdopen(os.dup(1), "wb")
    frames = os.fdopen(os.dup(0), "rb")
    os.dup2(DEVNULL, 0)
    os.dup2(DEVNULL, 1)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    # matplotlib draws with Agg, keeps its font cache in the session's own /tmp, and a cell's
    # figures are shown when it ends (open_figures), so plt.show() has nothing to warn about.
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/.matplotlib")
    warnings.filterwarnings("ignore", message=".*(non-GUI backend|non-interactive).*", category=UserWarning)
    for mod in os.environ.get(SANDBOX_KNOBS["session_preload"], "").split(","):
        if mod:
            try:
                __import__(mod)
            except ImportError:
                pass
    # What the host imported stays shared copy-on-write: the collector never walks (and so never
    # dirties) those objects in a session.
    gc.collect()
    gc.freeze()
    send(channel, {"op": "ready", "pid": os.getpid()})
    plain = set()  # the Unix session ids (their first process's pid) of the sessions without namespaces
    for line in frames:
        frame = json.loads(line)
        if frame.get("op") == "shutdown":
            return
        if frame.get("op") == "kill":
            pid = int(frame.get("pid") or 0)
            if pid > 1 and pid != os.getpid():
                kill_session(pid, plain)
            continue
        if frame.get("op") == "open":
            path = os.path.join(sockdir, frame["sid"] + ".sock")
            srv = listening(path)
            opts = {k: frame.get(k) for k in ("agent", "env", "home", "memory_mb")}
            if frame.get("agent"):
                opts["agent_path"] = os.path.join(sockdir, frame["sid"] + ".agent.sock")
                opts["agent_srv"] = listening(opts["agent_path"])
            report_r, report_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(report_r)
                frames.close()
                channel.close()
                open_session(srv, path, sockdir, report_w, opts)
                os._exit(0)
            os.close(report_w)
            srv.close()
            if opts.get("agent_srv") is not None:
                opts["agent_srv"].close()
            report = b""
            while True:
                chunk = os.read(report_r, 64)
                if not chunk:
                    break
                report += chunk
            os.close(report_r)
            try:
                holder, isolated = (int(x) for x in report.split())
            except ValueError:
                send(channel, {"op": "opened", "sid": frame["sid"], "error": "the session process died while opening"})
                continue
            if isolated != 1:
                plain.add(pid)
            opened = {"op": "opened", "sid": frame["sid"], "pid": holder, "socket": path, "isolated": isolated == 1}
            if opts.get("agent_path"):
                opened["agent_socket"] = opts["agent_path"]
            send(channel, opened)
