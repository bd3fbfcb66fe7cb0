"""convex_tools: convex collision queries for Blender.

The geometric core (``convex_tools.core``) needs numpy alone; the Blender layer is imported only
when Blender registers the extension, so that ``import convex_tools.core`` works anywhere.
"""

# Modules of the Blender layer, in registration order; each has register() and unregister().
_BLENDER_MODULES = ("preferences", "properties", "overlay", "operators", "watch", "ui",
                    "level_ops")


def _modules():
    import importlib
    return [importlib.import_module(f"{__name__}.{name}") for name in _BLENDER_MODULES]


def register():
    for module in _modules():
        module.register()


def unregister():
    for module in reversed(_modules()):
        module.unregister()
