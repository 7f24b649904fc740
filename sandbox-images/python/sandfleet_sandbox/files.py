"""A request's files: written before its code runs, read back after it (`fetch_files`). A path is relative to the work
dir or absolute; either way it must lie in one of the sandbox's writable places (the work dir, /tmp, /mnt, /dev/shm),
which the caller passes as `places`."""
import base64
import os
import stat

FETCH_MAX_BYTES = 16 << 20  # a larger file is not returned (not cut either: a part of a file is not the file)


def place_of(base, path, places):
    """The real path of `path` (relative to directory `base`, or absolute), or ValueError naming it when that is not in
    one of `places`: a path outside them, or one that leads out of them through a link."""
    if '\0' in path:
        raise ValueError('%r holds a NUL byte' % path)
    asked = os.path.normpath(os.path.join(base, path))
    real = os.path.realpath(asked)
    roots = [os.path.realpath(p) for p in places]
    if any(real == r or real.startswith(r + '/') for r in roots):
        return real
    if any(asked == p or asked.startswith(p + '/') for p in places):
        raise ValueError('%r: a link leads out of the sandbox\'s writable places (%s)' % (path, ', '.join(places)))
    raise ValueError('%r is outside the sandbox\'s writable places (%s)' % (path, ', '.join(places)))


def write_files(base, files, places):
    """Writes `files` (path → base64); ValueError naming a path that is not in one of `places`, before it is written."""
    for path, b64 in files.items():
        real = place_of(base, path, places)
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, 'wb') as f:
            f.write(base64.b64decode(b64))


def fetch_files(base, wanted, places, limit=FETCH_MAX_BYTES):
    """The `wanted` files as ({path: base64}, {path: why not}). Only a regular file whose real path is in one of
    `places` (a link out of them, also through a linked directory such as /proc/self, is refused), opened without
    following a last link and without blocking (a FIFO is refused), of at most `limit` bytes; nothing outside them is
    opened. The caller sees to it that nothing swaps a path for a link meanwhile (the executor: nothing of the job is
    left; a session: the cell's own process reads, with the cell's own rights)."""
    files, errors = {}, {}
    for path in wanted or ():
        try:
            real = place_of(base, path, places)
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except ValueError as e:
            errors[path] = str(e)
            continue
        except FileNotFoundError:
            errors[path] = 'no such file'
            continue
        except IsADirectoryError:
            errors[path] = 'a directory'
            continue
        except OSError as e:
            errors[path] = 'not readable: %s' % (e.strerror or e)
            continue
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                errors[path] = 'a directory'
                continue
            if not stat.S_ISREG(st.st_mode):
                errors[path] = 'not a regular file'
                continue
            if st.st_size > limit:
                errors[path] = 'larger than %d bytes: not returned' % limit
                continue
            with open(fd, 'rb', closefd=False) as f:
                data = f.read(limit + 1)  # the file may have grown since fstat
            if len(data) > limit:
                errors[path] = 'larger than %d bytes: not returned' % limit
                continue
            files[path] = base64.b64encode(data).decode()
        except OSError as e:
            errors[path] = 'not readable: %s' % (e.strerror or e)
        finally:
            os.close(fd)
    return files, errors
