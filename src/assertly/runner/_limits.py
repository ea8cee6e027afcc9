"""Concurrency that fits the open-file limit.

Every call in flight holds file descriptors (a command's pipes, an HTTP connection's socket).
``-j 1000`` under a limit of 1,024 open files would fail calls at random with "Too many open
files", each blamed on its agent. So before the run, the soft limit is raised as far as the
hard limit allows; if that is still too low, the concurrency is capped to what fits, and the
run says so.
"""

from __future__ import annotations

import os

__all__ = ["FDS_PER_CALL", "fit_concurrency"]

# Descriptors one call in flight may hold: a command's three pipes (six while it starts), the
# metadata file it may write, or an HTTP connection's socket. Generous on purpose.
FDS_PER_CALL = 8
# Descriptors a run needs besides its calls: the store and its WAL, the check process's pipes,
# report files, the interpreter's own.
RESERVED_FDS = 32


def _open_fds() -> int:
    for directory in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(directory))
        except OSError:
            continue
    return 16


def fit_concurrency(concurrency: int, label: str) -> tuple[int, str | None]:
    """The concurrency the open-file limit allows, and a message when it is lower.

    Args:
        concurrency: The calls in flight wanted.
        label: How the user set it, for the message (``-j 1000``).
    """
    try:
        import resource
    except ImportError:  # not POSIX
        return concurrency, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = _open_fds()
    needed = in_use + RESERVED_FDS + concurrency * FDS_PER_CALL
    if soft == resource.RLIM_INFINITY or needed <= soft:
        return concurrency, None
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    if needed <= soft:
        return concurrency, None
    fitted = max(1, (soft - in_use - RESERVED_FDS) // FDS_PER_CALL)
    return fitted, (
        f"{label} is capped to {fitted}: the limit of {soft} open files allows no more calls "
        "in flight at once (raise it with `ulimit -n`)"
    )
