"""The operation vocabulary, each verb implemented once.

Every function takes the driver context and an :class:`~conformance.scenario.Op`
and returns a JSON-ready result dict, or raises: the driver records either.
Verbs never judge; the oracles do.
"""
from __future__ import annotations

import gc
import os
import signal
import threading
import time

from conformance.history import describe_error

INFEASIBLE = {"resources": {"rlc_infeasible": 1}}
BAD_ARGS = {
    "frames_per_batch": {"frames_per_batch": 0},
    "total_frames": {"total_frames": -5},
    "sync_divisible": {"sync": True, "num_collectors": 2, "frames_per_batch": 63},
    "num_collectors": {"num_collectors": 0},
    "capacity": {"buffer_capacity": 0},
}


def _spec_for(ctx, op):
    """The spec of a construct op: placement, infeasibility, failure knobs."""
    a = op.args
    spec = ctx.spec
    resources = dict(spec.resources)
    if a.get("place"):
        resources[op.target] = {"resources": {a["place"]: 1}}
    if a.get("infeasible"):
        resources[op.target] = INFEASIBLE
    changes = {"resources": resources}
    if "sync" in a:
        changes["sync"] = bool(a["sync"])
    if a.get("ready") is False:
        changes["ready_timeout"] = None
    fail = a.get("fail")
    if fail == "unknown_env":
        changes["env_id"] = "RlcNoSuchEnv-v0"
    elif fail == "one_unknown_env":  # one healthy actor that must not outlive the error
        changes.update(env_id=(spec.env_id, "RlcNoSuchEnv-v0"), num_collectors=2)
    elif fail and fail.startswith("invalid:"):
        changes.update(BAD_ARGS[fail.split(":", 1)[1]])
    if a.get("named"):
        changes["actor_name"] = ctx.actor_name
    return spec.with_(**changes)


def construct(ctx, op):
    spec = _spec_for(ctx, op)
    adapter = ctx.adapter
    if op.target == "buffer":
        obj = adapter.make_buffer(spec)
    elif op.target == "collector":
        buffer = ctx.objects.get("buffer") if op.args.get("buffer") else None
        if op.args.get("buffer") and buffer is None:
            raise RuntimeError("scenario error: collector with buffer but no buffer built")
        obj = adapter.make_collector(spec, buffer)
    elif op.args.get("connect"):
        obj = adapter.connect_evaluator(spec)
        ctx.connected.add(op.target)
    else:
        obj = adapter.make_evaluator(spec)
    ctx.objects[op.target] = obj
    ctx.note_ray_started()
    actors = ctx.describe_actors(op.target)
    return {"actors": actors}


def iterate(ctx, op):
    batches = int(op.args.get("batches", 1))
    n = 0
    if batches > 0:
        for _ in ctx.adapter.iterate(ctx.objects["collector"]):
            n += 1
            if n >= batches:
                break
    return {"batches": n}


def exhaust(ctx, op):
    n = 0
    for _ in ctx.adapter.iterate(ctx.objects["collector"]):
        n += 1
    return {"batches": n}


def start(ctx, op):
    ctx.adapter.start(ctx.objects["collector"])
    return {}


def wait_frames(ctx, op):
    """Poll the buffer's length until it reaches ``frames`` (bounded)."""
    want = int(op.args.get("frames", 1))
    limit = float(op.args.get("timeout", 60))
    buffer = ctx.objects["buffer"]
    t0 = time.monotonic()
    n = ctx.adapter.buffer_len(buffer)
    while n < want:
        if time.monotonic() - t0 > limit:
            raise TimeoutError(f"buffer holds {n} frames after {limit}s, wanted {want}")
        time.sleep(0.05)
        n = ctx.adapter.buffer_len(buffer)
    return {"frames": n}


def sample(ctx, op):
    data = ctx.adapter.sample(ctx.objects["buffer"], int(op.args.get("batch_size", 8)))
    return {"numel": int(data.numel()) if hasattr(data, "numel") else None}


def _batch(n: int):
    """A small CartPole-shaped batch, as a collector would write it."""
    import torch
    from tensordict import TensorDict

    return TensorDict(
        {
            "observation": torch.zeros(n, 4),
            "action": torch.zeros(n, dtype=torch.int64),
            ("next", "observation"): torch.zeros(n, 4),
            ("next", "reward"): torch.ones(n, 1),
            ("next", "done"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "terminated"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "truncated"): torch.zeros(n, 1, dtype=torch.bool),
        },
        batch_size=[n],
    )


def extend(ctx, op):
    n = int(op.args.get("frames", 8))
    ctx.adapter.extend(ctx.objects["buffer"], _batch(n))
    return {"frames": n}


def submit(ctx, op):
    ctx.adapter.submit(ctx.objects["evaluator"], ctx.spec)
    return {}


def poll(ctx, op):
    timeout = float(op.args.get("timeout", 0))
    result = ctx.adapter.poll(ctx.objects["evaluator"], timeout)
    return {"ready": result is not None}


def kill(ctx, op):
    """Kill one actor of a component from outside the implementation."""
    import ray

    how = op.args.get("how", "ray_kill")
    index = int(op.args.get("index", 0))
    info = ctx.actors[op.target][index]
    handle = ctx.adapter.actors(op.target, ctx.objects[op.target])[index]
    if how == "ray_kill":
        ray.kill(handle)
    elif how == "sigkill":
        os.kill(info["pid"], signal.SIGKILL)
    elif how == "exit":
        handle.__ray_call__.remote(lambda self: os._exit(1))
    elif how == "hang":
        handle.__ray_call__.remote(lambda self: time.sleep(3600))
    elif how == "remove_node":
        from fixtures.clusters import kill_node

        node = next(n for n in ctx.fixture.get("nodes", []) if n["node_id"] == info["node_id"])
        if node.get("name") == "head":
            raise RuntimeError("scenario error: refusing to remove the head node")
        killed = kill_node(node)
        ctx.removed_nodes.append(node["name"])
        return {"how": how, "actor": info, "node": node["name"],
                "killed": [p["pid"] for p in killed]}
    else:
        raise ValueError(f"unknown kill method {how!r}")
    return {"how": how, "actor": info}


def _call_teardown(ctx, target, obj, shutdown_ray):
    t0 = time.monotonic()
    try:
        ctx.adapter.teardown(target, obj, shutdown_ray=shutdown_ray)
        status, error = "ok", None
    except BaseException as exc:  # noqa: BLE001 - the history records everything
        status, error = "raised", describe_error(exc)
    return {
        "status": status,
        "error": error,
        "duration": round(time.monotonic() - t0, 4),
        "thread": threading.current_thread().name,
    }


def teardown(ctx, op):
    """shutdown/close ``times`` times, from ``thread`` or ``concurrent`` threads."""
    obj = ctx.objects[op.target]
    shutdown_ray = bool(op.args.get("shutdown_ray", False))
    times = int(op.args.get("times", 1))
    concurrent = int(op.args.get("concurrent", 1))
    in_thread = op.args.get("thread", "main") != "main" or concurrent > 1
    calls = []
    for _ in range(times):
        if not in_thread:
            calls.append(_call_teardown(ctx, op.target, obj, shutdown_ray))
            continue
        results = [None] * concurrent
        barrier = threading.Barrier(concurrent)

        def run(k):
            barrier.wait()
            results[k] = _call_teardown(ctx, op.target, obj, shutdown_ray)

        threads = [
            threading.Thread(target=run, args=(k,), name=f"rlc-teardown-{k}", daemon=True)
            for k in range(concurrent)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        calls.extend(results)
    return {"calls": calls}


def ray_shutdown(ctx, op):
    import ray

    ray.shutdown()
    return {}


USE_VERBS = {
    "iterate": lambda ctx, o: next(iter(ctx.adapter.iterate(o))),
    "start": lambda ctx, o: ctx.adapter.start(o),
    "sample": lambda ctx, o: ctx.adapter.sample(o, 4),
    "extend": lambda ctx, o: ctx.adapter.extend(o, _batch(4)),
    "len": lambda ctx, o: ctx.adapter.buffer_len(o),
    "submit": lambda ctx, o: ctx.adapter.submit(o, ctx.spec),
    "poll": lambda ctx, o: ctx.adapter.poll(o, 0.5),
}


def use(ctx, op):
    USE_VERBS[op.args["call"]](ctx, ctx.objects[op.target])
    return {}


def check_alive(ctx, op):
    """Poll is_alive() until it equals ``expect`` or ``within`` seconds pass."""
    expect = bool(op.args.get("expect", False))
    within = float(op.args.get("within", 5.0))
    obj = ctx.objects[op.target]
    t0 = time.monotonic()
    seen = []
    while True:
        value = bool(ctx.adapter.is_alive(op.target, obj))
        elapsed = time.monotonic() - t0
        seen.append([round(elapsed, 3), value])
        if value == expect or elapsed > within:
            break
        time.sleep(0.1)
    return {"expect": expect, "value": value, "elapsed": round(elapsed, 3), "within": within}


def check_data(ctx, op):
    n = ctx.adapter.buffer_len(ctx.objects["buffer"])
    return {"frames": n, "at_least": int(op.args.get("at_least", 1))}


def check_name(ctx, op):
    """Is the named eval worker still registered under its name?"""
    import ray

    try:
        ray.get_actor(ctx.actor_name, namespace=ctx.spec.namespace)
        found = True
    except ValueError:
        found = False
    return {"found": found, "name": ctx.actor_name}


def drop(ctx, op):
    ctx.objects.clear()
    gc.collect()
    return {}


def peer(ctx, op):
    return ctx.run_peer(op)


VERB_FUNCS = {
    "construct": construct,
    "iterate": iterate,
    "exhaust": exhaust,
    "start": start,
    "wait_frames": wait_frames,
    "sample": sample,
    "extend": extend,
    "submit": submit,
    "poll": poll,
    "kill": kill,
    "teardown": teardown,
    "ray_shutdown": ray_shutdown,
    "use": use,
    "check_alive": check_alive,
    "check_data": check_data,
    "peer": peer,
    "check_name": check_name,
    "drop": drop,
}
