"""A job's output as the controller reads it while the job runs: its stdout and stderr pipes and, for a forked job, its
report pipe, each kept up to the job's cap (what comes past it is read and dropped, and marked truncated): a job never
blocks on a full pipe once its pipes are watched, and nothing is buffered unbounded."""
import os
import select


class Capture:
    """The pipes of one job (the controller's ends, non-blocking), read into bytearrays. Registered on the controller's
    poller only once `watch`ed (most jobs end before: their output waits in the pipes, read at `finish`)."""

    def __init__(self, out_r, err_r, rep_r, cap, poller):
        self.out_r, self.err_r, self.rep_r = out_r, err_r, rep_r
        self.cap, self.poller, self.watching = cap, poller, False
        self.bufs = {out_r: bytearray(), err_r: bytearray()}
        if rep_r is not None:
            self.bufs[rep_r] = bytearray()  # a reuse process's report pipe is read by its ReuseHandle
        self.truncated = dict.fromkeys(self.bufs, False)
        self.open = set(self.bufs)

    def watch(self):
        """From now on the controller's poll wakes for what the job writes."""
        self.watching = True
        for fd in self.open:
            self.poller.register(fd, select.POLLIN)

    def drain(self, fd):
        """Reads what is there: False at EOF, None when nothing is, else True."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return None
        if not data:
            self.open.discard(fd)
            if self.watching:
                self.poller.unregister(fd)
            return False
        room = self.cap - len(self.bufs[fd])
        if len(data) > room:
            self.truncated[fd] = True
            data = data[: max(room, 0)]
        self.bufs[fd] += data
        return True

    def finish(self):
        """Reads each pipe to its end, once every writer is dead, dying or done (EOF, or nothing more will come), and
        leaves the poller."""
        for fd in list(self.open):
            while self.drain(fd):
                pass
            if fd in self.open and self.watching:
                self.poller.unregister(fd)

    def unwatch(self):
        """Leaves the poller without reading (the pipes are closed by their owner)."""
        if self.watching:
            for fd in self.open:
                self.poller.unregister(fd)
        self.watching = False

    def close(self):
        for fd in self.bufs:
            os.close(fd)

    def text(self, fd):
        return self.bufs[fd].decode('utf-8', 'replace')
