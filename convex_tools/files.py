"""Report files written safely: a reader (a build pipeline, an image viewer) sees the old file or
the new one, never half of one, whatever interrupts the writer — and what the path names is
written, never replaced by something else.

- A regular file (or a new one) is written to a temporary name in its own folder (so that the
  rename never crosses a file system) and renamed over the target with ``os.replace``, which is
  atomic on POSIX and on Windows. The file keeps its permissions.
- A symbolic link is written *through*: its target is replaced atomically in the target's
  folder, and the link stays a link (renaming over the link would leave the target stale while
  a pipeline reads the old report through it).
- A FIFO, a character device (``/dev/stdout``, ``/dev/full``) or ``-`` (standard output) is
  written directly: it cannot be replaced, and a write error (``/dev/full``: no space) is an
  error, never a regular file left in the device's place.
- A missing folder is an error naming it; folders are never made.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile

STDOUT = "-"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def resolved(path) -> str:
    """The file a write to ``path`` lands in: a symbolic link's final target (relative links
    resolved from their own folder), else ``path`` itself."""
    if path == STDOUT or not os.path.islink(path):
        return path
    return os.path.realpath(path)


def is_special(path) -> bool:
    """True for ``-`` and for an existing FIFO, character or block device or socket: written
    directly, never replaced."""
    if path == STDOUT:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _temporary_name(path, suffix=""):
    folder, name = os.path.split(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=f".part{suffix}", dir=folder)
    os.close(fd)
    # mkstemp makes the file private (0600); the file it becomes gets the permissions the old
    # file had, else the usual ones open() would have given it.
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    os.chmod(temporary, mode)
    return temporary


@contextlib.contextmanager
def replaced_atomically(path, keep_suffix=False):
    """Yields a path to write in full. For a regular or new file it is a temporary file that
    replaces the target on success and is removed on any exception (the target is left as it
    was); a symbolic link's target is the one replaced. For a FIFO or a device it is the path
    itself, written directly. ``keep_suffix``: the temporary name ends like ``path`` (for
    writers that choose the format by the suffix)."""
    target = resolved(path)
    if is_special(target):
        yield target
        return
    _check_folder(target)
    suffix = os.path.splitext(target)[1] if keep_suffix else ""
    temporary = _temporary_name(target, suffix)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def write_text_atomically(path, text) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` as the module doc says."""
    target = resolved(path)
    if target == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if is_special(target):
        # No fsync: a FIFO or a terminal has nothing to sync, and says so with EINVAL.
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
        return
    with replaced_atomically(target) as temporary:
        with open(temporary, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def _check_folder(path) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        raise FileNotFoundError(2, f"the folder {folder} does not exist", path)
    if not os.path.isdir(folder):
        raise NotADirectoryError(20, f"{folder} is a file, not a folder", path)


def check_writable(path) -> None:
    """``OSError`` (with its reason) unless a report can be written at ``path``: ``-``, a
    writable FIFO or device, or a file (through its symbolic links) whose folder exists and
    takes a new file."""
    target = resolved(path)
    if target == STDOUT:
        return
    if os.path.isdir(target):
        raise IsADirectoryError(21, "it is a folder, not a file", path)
    if is_special(target):
        if not os.access(target, os.W_OK):
            raise PermissionError(13, "Permission denied", path)
        return
    folder = os.path.dirname(os.path.abspath(target))
    parent = folder
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise NotADirectoryError(20, f"{parent} is a file, not a folder", path)
    _check_folder(target)
    os.remove(_temporary_name(target))
