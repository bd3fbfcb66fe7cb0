"""``console.filtered_output``: Blender's harmless lines are dropped at the file-descriptor level
(where its C code writes), everything else gets through in order."""

import os

from convex_tools.console import EGL_BAD_MATCH, READ_BLEND, filtered_output

EGL_LINE = (b"EGL Error (0x3009): EGL_BAD_MATCH: Arguments are inconsistent (for example, a "
            b"valid context requires buffers not supplied by a valid surface).\n")


def test_matching_lines_are_dropped_and_the_rest_kept_in_order(capfd):
    with filtered_output(EGL_BAD_MATCH, READ_BLEND):
        os.write(2, EGL_LINE)
        os.write(2, b"Error: something a user must see\n")
        os.write(1, b'00:00.448  blend            | Read blend: "/tmp/level.blend"\n')
        os.write(1, b"first\n")
        os.write(2, EGL_LINE)
        os.write(1, b"second\n")
    out, err = capfd.readouterr()
    assert out == "first\nsecond\n"
    assert err == "Error: something a user must see\n"


def test_other_egl_errors_are_kept(capfd):
    with filtered_output(EGL_BAD_MATCH):
        os.write(2, b"EGL Error (0x3001): EGL_NOT_INITIALIZED\n")
    assert capfd.readouterr().err == "EGL Error (0x3001): EGL_NOT_INITIALIZED\n"


def test_output_written_after_an_exception_in_the_block_still_gets_through(capfd):
    try:
        with filtered_output(EGL_BAD_MATCH):
            os.write(1, b"kept\n")
            raise KeyError("boom")
    except KeyError:
        pass
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "kept\nafter\n"
