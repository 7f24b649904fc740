"""The C-level state of the extension modules the zygote tiers preload, for the `reuse` level's check.

State kept in C (a module's globals in its C code, not in any Python dict) is invisible to the baseline's walk. Each
item of it that a job can change is either read here, so that the check compares it before and after each job
(`c_state`), or its setter is refused by `static_taint` (`REFUSED_NAMES`: code that names it runs forked). The census
behind both lists, module by module and tier by tier, is docs/reuse-census.md.
"""
import sys

# Setters of C-level state that the check does not read: code naming one runs forked.
REFUSED_NAMES = ()


def c_state():
    """The readings of the C-level state of the loaded extension modules, in a fixed order: equal before and after a
    job that changed none of it."""
    out = []
    socket = sys.modules.get('socket')
    if socket is not None: out.append(socket.getdefaulttimeout())
    return out
