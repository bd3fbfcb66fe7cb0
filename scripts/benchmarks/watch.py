"""Live watch: cost of one update after an object moves (a pair of 1k-vertex hulls).

Each frame moves one object (0.01 along x, a little rotation) and lets Blender re-evaluate the
depsgraph (``view_layer.update``), which runs the watch's depsgraph_update_post handler exactly
as in the UI. Reported: the handler's own cost (``watch.last_refresh_seconds``: shapes from the
cached hulls, GJK warm-started from the pair's separating axis, the overlay drawing rebuilt) and,
for context, the whole depsgraph update including Blender's own evaluation. The first update
(building the hulls) is reported separately.
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
        handler, whole, distances = [], [], []
        for frame in range(1, frames + 1):
            objs[1].location.x = 3.0 + 0.01 * (frame % 50)
            objs[1].rotation_euler.z = 0.002 * frame
            watch.last_refresh_seconds = float("nan")
            t0 = time.perf_counter()
            bpy.context.view_layer.update()        # runs the depsgraph handler
            whole.append(time.perf_counter() - t0)
            handler.append(watch.last_refresh_seconds)
            distances.append(pair.result)
        if any(np.isnan(handler)):
            raise RuntimeError("the watch handler did not run on every depsgraph update")
        # The result must follow the motion (a stale matrix would freeze it).
        changed = sum(a != b for a, b in zip(distances, distances[1:]))
        verts = len(watch._local["RockA"][1].vertices)
        print(f"pair of {verts}-vertex hulls, {frames} moves of 0.01 (result changed "
              f"{changed} times; last {pair.result}):")
        print(f"  first update (hull builds)        {first * 1e3:8.1f} ms")
        print(f"  watch handler per move, median    {np.median(handler) * 1e3:8.3f} ms "
              f"(p90 {np.percentile(handler, 90) * 1e3:.3f}, max {np.max(handler) * 1e3:.3f})")
        print(f"  whole depsgraph update, median    {np.median(whole) * 1e3:8.3f} ms")
    finally:
        convex_tools.unregister()
