"""Fixtures for tests through the real bpy module: an empty factory scene with the add-on."""

import pytest

bpy = pytest.importorskip("bpy")


@pytest.fixture
def addon():
    """An empty scene with Convex Tools registered (unregistered afterwards)."""
    import convex_tools

    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    try:
        yield convex_tools
    finally:
        convex_tools.unregister()
