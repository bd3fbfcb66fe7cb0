"""Lines Blender's C code prints that a user of our commands does not need.

Blender writes straight to the process's file descriptors 1 and 2 (C stdio and its log), below
Python's ``sys.stdout``: the only way to drop a line is to point those descriptors at a
temporary file for the duration of the call, then pass on every line that is not known to be
harmless. ``filtered_output`` does that; everything it does not drop reaches the same stream,
in order, once the block ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

# Printed by the headless EGL setup for every offscreen context it tries before the one that
# works (the pictures are drawn all the same).
EGL_BAD_MATCH = re.compile(r"^EGL Error \(0x3009\): EGL_BAD_MATCH\b")
# Blender's note for every file opened or saved; our commands say which file they check.
READ_BLEND = re.compile(r"(^|\| )Read blend: ")
SAVED_AS = re.compile(r"^(Info: )?Saved as ")


def _flush_c_stdio():
    """Flush the C library's stdio buffers, so that what Blender printed is in the file now."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library to reach (not on POSIX)
        pass


@contextlib.contextmanager
def filtered_output(*patterns, fds=(1, 2)):
    """Within the block, lines written to ``fds`` that match one of ``patterns`` (compiled
    regular expressions) are dropped; the others are written out when the block ends."""
    if not patterns:
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    redirected = []   # (fd, its saved duplicate, the temporary file)
    try:
        for fd in fds:
            try:
                saved = os.dup(fd)
            except OSError:       # closed: nothing can be printed there anyway
                continue
            capture = tempfile.TemporaryFile()
            os.dup2(capture.fileno(), fd)
            redirected.append((fd, saved, capture))
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        _flush_c_stdio()
        for fd, saved, capture in redirected:
            os.dup2(saved, fd)
            os.close(saved)
            capture.seek(0)
            kept = [line for line in capture.read().splitlines(keepends=True)
                    if not any(p.search(line.decode("utf-8", "replace")) for p in patterns)]
            capture.close()
            _write_all(fd, b"".join(kept))


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]
