"""The controller's end of the runner's channel: NDJSON frames in and out, each frame in parsed once, by its op's
parser (PARSERS: frames.py, judge_frames.py), and queued in order for the controller to answer; the runner's word on
the judge that runs (its acks, its stop) kept apart for that judge to take.

The channel is a private dup of the executor's fds 0 and 1 (or the runner's Unix socket): fds 0, 1 and 2 point at
/dev/null once it is open, and no other process holds it, so nothing a job writes can reach it.
"""
import collections
import fcntl
import json
import os
import socket
import stat

from .frames import FrameError, exec_job, frame_id
from .judge_frames import JudgeAck, JudgeStop, judge_ack, judge_job, judge_stop
from .sandbox_env import SANDBOX_ENV

# The most the controller reads of the runner's channel at once (a frame of megabytes comes in few reads), and the
# buffer it asks the kernel for on the channel and on a job pipe whose job is larger than a pipe holds by default (each
# pipe-full is a turn between the writer and the reader: fewer turns under load).
CHANNEL_READ = 1 << 20
BIG_BUFFER = 1 << 20
PIPE_BYTES = 65536  # a pipe's default capacity (Linux)
F_SETPIPE_SZ = 1031


class Shutdown(collections.namedtuple('Shutdown', ())):
    """A `shutdown` frame: kill every job, exit."""

    __slots__ = ()


def shutdown(frame):
    return SHUTDOWN


SHUTDOWN = Shutdown()
# Each op the runner sends: its frame's parser.
PARSERS = {
    'exec': exec_job,
    'judge': judge_job,
    'judge_ack': judge_ack,
    'judge_stop': judge_stop,
    'shutdown': shutdown,
}
# The runner's word on the judge that runs: its frames' types, and their ops (a refused one is that judge's to answer).
WORDS = (JudgeAck, JudgeStop)
WORD_OPS = ('judge_ack', 'judge_stop')


def parse_frame(frame):
    """A decoded frame (what json.loads made of a line) as its frozen type; FrameError when it is not one of PARSERS'
    ops, or not as its op's parser wants it."""
    if type(frame) is not dict:
        raise FrameError('a frame that is not a JSON object')
    op = frame.get('op')
    parser = PARSERS.get(op) if type(op) is str else None
    if parser is None:
        raise FrameError('a frame of no known op (%.40r)' % (op,), frame_id(frame))
    try:
        return parser(frame)
    except FrameError as e:
        raise FrameError(str(e), e.frame_id, op) from None


def grow_pipe(fd, size):
    """Asks for a pipe buffer of `size` bytes on pipe `fd` (either end); where it is refused (past
    /proc/sys/fs/pipe-max-size, or the user's pipe pages), the pipe keeps its own."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        pass


def open_channel():
    """The runner's channel: (fd read from, fd written to). stdin/stdout; or, when SANDFLEET_CHANNEL names the runner's
    listening Unix socket (the docker driver binds it into the container), that socket, connected once, here, before
    any job runs."""
    path = os.environ.get(SANDBOX_ENV['channel'])
    if not path:
        fds = os.dup(0), os.dup(1)
        if stat.S_ISFIFO(os.fstat(fds[0]).st_mode):
            grow_pipe(fds[0], BIG_BUFFER)
        return fds
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BIG_BUFFER)  # the kernel caps it (net.core.rmem_max)
    except OSError:
        pass
    sock.connect(path)
    fd = sock.detach()
    return fd, fd


class RunnerChannel:
    """The runner's channel as the controller holds it: `fd_in` (polled by the controller), `send`; `jobs`, the typed
    frames still to answer, in the order they came (a FrameError among them: a frame refused at its parse, answered in
    its turn); `words`, the runner's word on the judge that runs (WORDS, and those of their ops refused at their
    parse), in the order they came, for that judge to take (judge_run.py); `closing` once a `shutdown` came or the
    runner closed its end."""

    def __init__(self):
        self.fd_in, self.fd_out = open_channel()
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.set_inheritable(self.fd_in, False)
        os.set_inheritable(self.fd_out, False)
        self.jobs = []
        self.words = []
        self.closing = False
        self.pieces = []  # the pieces of a frame not ended yet
        self.inbuf = None  # what the channel is read into (allocate: after the zygotes' fork, none of them holds it)

    def allocate(self):
        self.inbuf = memoryview(bytearray(CHANNEL_READ))

    def send(self, frame):
        os.write(self.fd_out, json.dumps(frame).encode() + b'\n')

    def log(self, level, message):
        self.send({'op': 'log', 'level': level, 'message': message})

    def read(self):
        """One read of the channel, its frames taken; False at its end (the runner closed it: `closing`). A frame of
        megabytes (stdin, files) comes in many reads: its pieces are joined once, at its newline (joining and scanning
        the whole buffer at each read would be quadratic in the frame's size, and each copy of megabytes costs the
        job)."""
        n = os.readv(self.fd_in, [self.inbuf])
        if not n:
            self.closing = True
            return False
        data = bytes(self.inbuf[:n])
        start = 0
        nl = data.find(b'\n')
        while nl != -1:
            if self.pieces:
                self.pieces.append(data[start:nl])
                line = b''.join(self.pieces)
                self.pieces = []
            else:
                line = data[start:nl]
            self.take(line)
            start = nl + 1
            nl = data.find(b'\n', nl + 1)
        if start < n:
            self.pieces.append(data[start:] if start else data)
        return True

    def take(self, line):
        """One frame, parsed once into its frozen type: a job queued, a word on the judge that runs kept for it,
        `shutdown` heeded; a frame refused at its parse queued to be answered (a result naming its id; a refused word:
        its judge's to answer), or logged when it names no job."""
        if not line.strip():
            return
        try:
            job = parse_frame(json.loads(line))
        except ValueError as e:  # not JSON (json's own error is a ValueError), or a FrameError
            error = e if isinstance(e, FrameError) else FrameError('a frame that is not JSON')
            if error.frame_id is None:
                self.log('error', 'frame refused: %s' % error)
                return
            job = error
        if isinstance(job, Shutdown):
            self.closing = True
        elif isinstance(job, WORDS) or (isinstance(job, FrameError) and job.op in WORD_OPS):
            self.words.append(job)
        else:
            self.jobs.append(job)
