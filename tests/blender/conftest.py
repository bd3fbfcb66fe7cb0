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


@pytest.fixture(scope="module")
def registered():
    """Convex Tools registered for a whole test module (left as found: a module run after
    another that registered it does not unregister it)."""
    import convex_tools

    already = hasattr(bpy.types.Scene, "convex_traversal")
    if not already:
        convex_tools.register()
    yield convex_tools
    if not already:
        convex_tools.unregister()
