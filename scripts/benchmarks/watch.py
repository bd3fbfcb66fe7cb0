"""Live watch: cost of one update after an object moves (a pair of 1k-vertex hulls).

Measures ``watch.refresh`` as the depsgraph handler runs it after a move of 0.01 per frame:
shapes from cached hulls, GJK warm-started from the pair's separating axis, the overlay
drawing rebuilt. The first update (building the hulls) is reported separately.
"""

import time

import numpy as np


def run(args):
    try:
        import bpy
    except ImportError:
        print("bpy is not installed: skipped")
        return
    import convex_tools
    from convex_tools import watch

    frames = 50 if args.quick else 500
    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    try:
        rng = np.random.default_rng(7)
        objs = []
        for name, x in (("RockA", 0.0), ("RockB", 3.0)):
            # ~1000 hull vertices: points on a slightly jittered sphere are all extreme
            d = rng.normal(size=(1000, 3))
            d /= np.linalg.norm(d, axis=1)[:, None]
            mesh = bpy.data.meshes.new(name)
            mesh.from_pydata(d.tolist(), [], [])
            obj = bpy.data.objects.new(name, mesh)
            obj.location.x = x
            bpy.context.scene.collection.objects.link(obj)
            objs.append(obj)
        scene = bpy.context.scene
        pair = scene.convex_tools.watch_pairs.add()
        pair.object_a, pair.object_b = objs
        bpy.context.view_layer.update()
        start = time.perf_counter()
        scene.convex_tools.watch_enabled = True   # first refresh: builds both hulls
        first = time.perf_counter() - start
        depsgraph = bpy.context.evaluated_depsgraph_get()
        times = []
        for frame in range(frames):
            objs[1].location.x = 3.0 + 0.01 * (frame % 50)
            objs[1].rotation_euler.z = 0.002 * frame
            t0 = time.perf_counter()
            watch.refresh(scene, depsgraph)
            times.append(time.perf_counter() - t0)
        verts = len(watch._local["RockA"][1].vertices)
        print(f"pair of {verts}-vertex hulls, {frames} moves of 0.01:")
        print(f"  first update (hull builds)   {first * 1e3:8.1f} ms")
        print(f"  update after a move, median  {np.median(times) * 1e3:8.3f} ms "
              f"(max {np.max(times) * 1e3:.3f} ms); result {pair.result}")
    finally:
        convex_tools.unregister()
