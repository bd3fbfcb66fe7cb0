"""Files written atomically: a reader (a build pipeline, an image viewer) sees the old file or
the new one, never half of one, whatever interrupts the writer.

Each file is written to a temporary name in its own folder (so that the rename never crosses a
file system) and renamed over the target with ``os.replace``, which is atomic on POSIX and on
Windows.
"""

from __future__ import annotations

import contextlib
import os
import tempfile


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temporary_name(path, suffix=""):
    folder, name = os.path.split(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=f".part{suffix}", dir=folder)
    os.close(fd)
    # mkstemp makes the file private (0600); the file it becomes gets the usual permissions,
    # as open() would have given it.
    os.chmod(temporary, 0o666 & ~_umask())
    return temporary


@contextlib.contextmanager
def replaced_atomically(path, keep_suffix=False):
    """Yields a temporary path to write in full; on success it replaces ``path``, on any
    exception it is removed and ``path`` is left as it was. ``keep_suffix``: the temporary name
    ends like ``path`` (for writers that choose the format by the suffix)."""
    suffix = os.path.splitext(path)[1] if keep_suffix else ""
    temporary = _temporary_name(path, suffix)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def write_text_atomically(path, text) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    with replaced_atomically(path) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def check_writable(path) -> None:
    """``OSError`` (with its reason) unless a file can be written at ``path``: the folder exists
    or can be made, ``path`` is not a folder, and the folder takes a new file."""
    if os.path.isdir(path):
        raise IsADirectoryError(21, "it is a folder, not a file", path)
    folder = os.path.dirname(os.path.abspath(path))
    parent = folder
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise NotADirectoryError(20, f"{parent} is a file, not a folder", path)
    os.makedirs(folder, exist_ok=True)
    os.remove(_temporary_name(path))
