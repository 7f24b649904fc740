"""A request's files: written into the work dir before its code runs, read back after it (`fetch_files`)."""
import base64, os, stat

FETCH_MAX_BYTES = 16 << 20  # a larger file is not returned (not cut either: a part of a file is not the file)


def write_files(base, files):
    """Writes `files` (relative path → base64) under directory `base`; ValueError for a path that leaves it."""
    for rel, b64 in files.items():
        path = os.path.normpath(rel)
        if path.startswith(('/', '..')): raise ValueError('files: %r escapes the working directory' % rel)
        if os.path.dirname(path): os.makedirs(os.path.join(base, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(base, path), 'wb') as f: f.write(base64.b64decode(b64))


def fetch_files(base, wanted, limit=FETCH_MAX_BYTES):
    """The `wanted` files (paths relative to directory `base`) as {path: base64}. Only a regular file whose real path is
    in `base` (a link out of it, also through a linked directory such as /proc/self, is refused), opened without
    following a last link and without blocking (a FIFO is refused), of at most `limit` bytes (a larger one is refused);
    a path that is missing or refused is left out. The caller sees to it that nothing swaps a path for a link meanwhile
    (the executor: nothing of the job is left; a session: the cell's own process reads, with the cell's own rights)."""
    files = {}
    if not wanted: return files
    root = os.path.realpath(base) + '/'
    for rel in wanted:
        p = os.path.realpath(os.path.join(root, rel))
        if not p.startswith(root): continue
        try: fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError: continue
        try:
            with open(fd, 'rb') as f:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > limit: continue
                data = f.read(limit + 1)  # the file may have grown since fstat
                if len(data) <= limit: files[rel] = base64.b64encode(data).decode()
        except OSError: pass
    return files
