"""What a batch a collector yields says about the env steps it holds
(the ``transition_batches`` convention: torchrl's layout).

Every env of the catalog is CartPole (``conformance.envs``): every step
pays reward 1.0, the terminal one too (the collector resets the env after
it; the slow envs set a fallen pole up again and never terminate). In
torchrl's layout ``("next", "reward")`` and the three done flags are one
wide, ``done`` is ``terminated | truncated``, and along the last batch
dimension the rows are consecutive steps of one env: a step that is not
done is followed by the step taken from its next observation. Mutation
analysis found each of these broken unseen (``impl/rollout.py``: a reward
column two wide, ``done = terminated & truncated``, an env reset after
every step or never; ci/results/mutation/answers.txt).
"""
from __future__ import annotations

from conformance.ops.samples import as_array, entry

REWARD = ("next", "reward")
FLAGS = (("next", "done"), ("next", "terminated"), ("next", "truncated"))
OBS, NEXT_OBS = "observation", ("next", "observation")


def _name(key) -> str:
    return "/".join(key) if isinstance(key, tuple) else key


def batch_steps(batch) -> dict | None:
    """``{"rows": n, "faults": [...]}``: the ``n`` steps of a TensorDict
    batch and what in them breaks the layout above (each fault a sentence,
    with its count of rows where it has one); a batch that is not a
    TensorDict with those entries breaks it too (``rows`` None). None for
    what a buffer-mode collector yields (the frames written, or None: no
    steps to read); ``{"unreadable": why}`` when the harness could not
    read the entries (a dtype numpy cannot take). Never raises: a reading
    of the harness's is never blamed on the implementation's call."""
    if batch is None or (isinstance(batch, int) and not isinstance(batch, bool)):
        return None
    try:
        return _batch_steps(batch)
    except Exception as exc:  # noqa: BLE001 - e.g. a dtype numpy cannot take (bfloat16)
        return {"unreadable": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _batch_steps(batch) -> dict:
    import numpy as np

    if not (hasattr(batch, "batch_size") and hasattr(batch, "get")):
        return {"rows": None, "faults": [f"a {type(batch).__module__}.{type(batch).__qualname__}, "
                                         "not a TensorDict"]}
    shape = tuple(batch.batch_size)
    keys = (REWARD, *FLAGS, OBS, NEXT_OBS)
    found = {k: entry(batch, k) for k in keys}
    missing = [_name(k) for k, v in found.items() if v is None]
    if not shape or missing:
        return {"rows": None, "faults": [f"batch_size {list(shape)}, no rows" if not shape
                                         else f"no {', '.join(missing)} entry"]}
    a = {k: as_array(v) for k, v in found.items()}
    n = int(np.prod(shape))
    faults = [f"{_name(k)} has shape {list(a[k].shape)}, not {[*shape, 1]} (one wide)"
              for k in (REWARD, *FLAGS) if a[k].shape != (*shape, 1)]
    if faults:
        return {"rows": n, "faults": faults}  # the rows below cannot be read one by one
    reward = a[REWARD][..., 0]
    done, term, trunc = (a[k][..., 0].astype(bool) for k in FLAGS)
    counts = {
        "reward not 1.0 (every catalog env pays 1.0 a step)": int(np.sum(reward != 1.0)),
        "done is not terminated | truncated": int(np.sum(done != (term | trunc))),
    }
    obs, next_obs = a[OBS], a[NEXT_OBS]
    if obs.shape[:len(shape)] != shape or obs.shape != next_obs.shape:
        faults.append(f"observation {list(obs.shape)} and next observation "
                      f"{list(next_obs.shape)} are not rows of one shape")
    elif shape[-1] > 1:
        lead = (slice(None),) * (len(shape) - 1)  # the time axis is the last batch dimension
        gone, came = next_obs[(*lead, slice(None, -1))], obs[(*lead, slice(1, None))]
        differs = np.any(gone != came, axis=tuple(range(len(shape), obs.ndim)))
        counts["not done, yet not followed by the step from its next observation"] = int(
            np.sum(differs & ~done[(*lead, slice(None, -1))]))
    faults += [f"{k}: {v} of {n} rows" for k, v in counts.items() if v]
    return {"rows": n, "faults": faults}
