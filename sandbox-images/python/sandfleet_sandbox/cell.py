"""A session's cell: its files written, its code run in the session's globals (a Jupyter kernel's display of its value
and figures), its files read back; the result written to the session process."""
import ast
import base64
import io
import json
import linecache
import os
import resource
import sys
import traceback

from .limits import address_space
from .frames import exec_job
from .files import fetch_files, write_files

DEVNULL = os.open(os.devnull, os.O_RDWR)
_dumps = json.dumps
_loads = json.loads


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# A value's rich forms, as a Jupyter kernel's display formatter asks for them: MIME type, method.
REPR_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("text/latex", "_repr_latex_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("application/json", "_repr_json_"),
)


def mime_bundle(value):
    """{MIME type: content} of a cell's value: its repr, and each `_repr_*_` form its class defines
    (binary forms base64, JSON as text); a form that raises or gives None is left out."""
    bundle = {"text/plain": repr(value)}
    if isinstance(value, type):
        return bundle
    for mime, name in REPR_METHODS:
        if getattr(type(value), name, None) is None:
            continue
        try:
            data = getattr(value, name)()
        except Exception:  # noqa: BLE001 - a broken form is left out, as Jupyter leaves it
            continue
        if isinstance(data, tuple):  # (data, metadata)
            data = data[0] if data else None
        if isinstance(data, bytes):
            data = base64.b64encode(data).decode()
        elif mime == "application/json" and data is not None:
            data = _dumps(data)
        if isinstance(data, str):
            bundle[mime] = data
    return bundle


def open_figures():
    """The matplotlib figures a cell left open, as Jupyter's inline backend shows them when a cell
    ends: one {"text/plain", "image/png"} item each (Agg), then closed."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    shown = []
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            png = io.BytesIO()
            fig.savefig(png, format="png", bbox_inches="tight")
            shown.append({"text/plain": repr(fig), "image/png": base64.b64encode(png.getvalue()).decode()})
        plt.close("all")
    except Exception as e:  # noqa: BLE001 - the cell's own figure failed to draw
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
    return shown


def run_code(code, g, n, main_key=None, traceback_to_stderr=True):
    """Runs one cell in globals g; returns (status, exit_code, error, display). With `main_key`, the display of the
    cell's value (not those of its figures) carries that key. An exception's traceback is its error's, and written to
    stderr too unless `traceback_to_stderr` is False (a streamed cell: a kernel reports it once, as its error)."""
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
                display = [mime_bundle(value)]
                if main_key:
                    display[0][main_key] = ""
        return "ok", 0, None, display + open_figures()
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
        if traceback_to_stderr:
            sys.stderr.write(text)
        return "error", 1, {"type": type(e).__name__, "message": str(e), "traceback": text}, open_figures()


def run_cell(job, g, n, res_w, workdir, places, main_key=None, stream=False):
    """In R: runs the cell (`job`, its frames.ExecJob; fd 1/2 already on the output pipes), then writes the result to
    res_w. The request's files are written and read back relative to the session's work dir `workdir` (whatever the
    cells made the current one), each in one of `places`; `main_key` marks its value's display (run_code); `stream`:
    its output goes to the runner as it comes, an exception's traceback only in its error (run_code)."""
    data = job.stdin
    if data:
        fd = os.memfd_create("stdin")
        write_all(fd, data.encode())
        os.lseek(fd, 0, os.SEEK_SET)
        os.dup2(fd, 0)
        os.close(fd)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[0])
        resource.setrlimit(resource.RLIMIT_AS, (address_space(pages, job.memory_mb), hard))
    except (OSError, ValueError):
        pass
    try:
        write_files(workdir, job.files, places)
    except (OSError, ValueError) as e:  # the cell does not run: the error is its own, the session's state unchanged
        status, code, error, display = "error", 1, {"type": type(e).__name__, "message": str(e)}, []
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
    else:
        status, code, error, display = run_code(job.code, g, n, main_key, not stream)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    files, fetch_errors = fetch_files(workdir, job.fetch_files, places)
    try:
        result = {
            "id": job.id,
            "status": status,
            "exit_code": code,
            "error": error,
            "display": display,
            "files": files,
        }
        if fetch_errors:
            result["fetch_errors"] = fetch_errors
        body = _dumps(result)
    except (TypeError, ValueError) as e:
        body = _dumps(
            {
                "id": job.id,
                "status": "error",
                "exit_code": 1,
                "error": {"type": type(e).__name__, "message": str(e)},
                "display": [],
                "files": {},
            }
        )
    # The output is in its pipes already (flushed above): the result pipe's end tells S the cell is
    # over, and S takes what the output pipes hold without waiting for their ends (one wake-up).
    end_cell(body, res_w)


def end_cell(body, res_w):
    """In R: the cell's result `body` (its JSON) written to S, R's standard streams let go."""
    write_all(res_w, body.encode())
    os.close(res_w)
    os.dup2(DEVNULL, 0)
    os.dup2(DEVNULL, 1)
    os.dup2(DEVNULL, 2)


def refuse_cell(error, res_w):
    """In R: the answer to a cell whose frame was refused at its parse (`error`, a frames.FrameError): nothing ran, the
    session's state is as it was."""
    body = {
        "id": error.frame_id,
        "status": "infra_error",
        "exit_code": None,
        "error": {"type": "BadFrame", "message": "the session refused the cell's frame: %s" % error},
        "display": [],
        "files": {},
    }
    end_cell(_dumps(body), res_w)


WARM_FRAME = _dumps(
    {
        "op": "exec",
        "id": "",
        "code": "_ = 0",
        "stdin": "",
        "timeout_ms": 10000,
        "memory_mb": 1024,
        "files": {},
        "fetch_files": [],
        "max_output_bytes": 1 << 20,
        "isolation": "fork",
        "wait_ms": None,
        "tenant": None,
    }
)


def warm_cell():
    """In a fresh R: walks the cell path once on throwaway data, so that most of its copy-on-write
    page faults happen before the frame arrives, not after."""
    code = exec_job(_loads(WARM_FRAME)).code
    linecache.cache["<warm>"] = (len(code), None, code.splitlines(True), "<warm>")
    tree = ast.parse(code, "<warm>", "exec")
    if isinstance(tree.body[-1], ast.Expr):
        ast.Expression(tree.body[-1].value)
    exec(compile(tree, "<warm>", "exec"), {"__builtins__": __builtins__})
    del linecache.cache["<warm>"]
    resource.getrlimit(resource.RLIMIT_AS)
    _dumps({"id": "", "status": "ok", "exit_code": 0, "error": None, "display": [], "files": {}})
    sys.stdout.flush()
