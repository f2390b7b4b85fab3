"""What the rows a buffer's ``sample()`` returned say about where they came
from: a row that was never written.

Every env of the catalog is CartPole (``conformance.envs``): a step's
reward is 1.0, and its observations are never all zero (a reset draws them
from U(-0.05, 0.05)); the rows the driver writes (``verbs.extend``) have
reward 1.0 too. So a sampled row whose observation, next observation and
reward are all zero was written by nobody: it is a slot of the buffer's
storage that no write filled (numpy and torch storages start zeroed), and
the buffer hands it out as data. Mutation analysis found that class of bug
unseen (``impl/actors.py``: every write landing in row 0, or ``extend``
storing nothing while it counts the rows; ci/results/mutation/answers.txt).
"""
from __future__ import annotations

from collections.abc import Mapping

#: the entries a row written by a CartPole step, or by the driver, never has
#: all zero; the others (actions, done flags, a buffer's own ``index``) may be
ROW_KEYS = ("observation", ("next", "observation"), ("next", "reward"))
REWARD = ("next", "reward")
#: the shape of one row's observation: CartPole's, and the driver's rows' too
OBSERVATION_ROW = (4,)


def as_array(value):
    import numpy as np

    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def entry(data, key):
    """``data[key]`` for a nested key, in a TensorDict or nested mappings; None if absent."""
    if hasattr(data, "batch_size") and hasattr(data, "get"):  # a TensorDict
        return data.get(key, None)
    for part in key if isinstance(key, tuple) else (key,):
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def sampled_rows(data) -> dict:
    """``{"rows": n, "unwritten": k, "keys": [...]}``: of the ``n`` rows of
    ``data`` (a TensorDict, or a mapping of arrays whose first dimension is
    the row), ``k`` have every entry of ``ROW_KEYS`` present zero (and
    ``"observation_row"``, the shape of one row's observation, where it is not
    ``OBSERVATION_ROW``);
    ``{"entry_missing": "next/reward", "keys": [...]}`` when it has no
    ``("next", "reward")``, which every row written has (the driver's own rows
    have zero observations: the reward alone tells them from a slot nothing
    filled); or ``{"rows_unreadable": why}`` when ``data`` is neither or cannot
    be read as arrays. Never raises: a reading of the harness's is never
    blamed on the implementation's call."""
    try:
        return _sampled_rows(data)
    except Exception as exc:  # noqa: BLE001 - e.g. a dtype numpy cannot take (bfloat16)
        return {"rows_unreadable": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _sampled_rows(data) -> dict:
    import numpy as np

    if not (hasattr(data, "batch_size") or isinstance(data, Mapping)):
        return {"rows_unreadable": f"sample() returned a {type(data).__module__}."
                                   f"{type(data).__qualname__}, not a TensorDict or a mapping"}
    if hasattr(data, "batch_size") and len(data.batch_size) > 1:
        data = data.reshape(-1)
    found = [(k, entry(data, k)) for k in ROW_KEYS]
    found = [(k, as_array(v)) for k, v in found if v is not None]
    if not any(k == REWARD for k, _ in found):
        # every row the suite writes has one (a CartPole step's, the driver's
        # extend()): a buffer that hands rows back without it lost what was written
        return {"entry_missing": "/".join(REWARD),
                "keys": sorted("/".join(k) if isinstance(k, tuple) else str(k)
                               for k in _keys(data))[:20]}
    n = found[0][1].shape[0] if found[0][1].ndim else 0
    written = np.zeros(n, dtype=bool)
    for key, value in found:
        if value.ndim == 0 or value.shape[0] != n:
            return {"rows_unreadable": f"entry {key!r} has shape {list(value.shape)}, "
                                       f"not {n} rows"}
        written |= np.any(value.reshape(n, -1) != 0, axis=1)
    out = {"rows": int(n), "unwritten": int(n - written.sum()),
           "keys": ["/".join(k) if isinstance(k, tuple) else k for k, _ in found]}
    observation = dict(found).get("observation")
    if observation is not None and tuple(observation.shape[1:]) != OBSERVATION_ROW:
        # a buffer that stores or returns rows of another shape (a whole batch in each
        # slot) hands back what no write wrote
        out["observation_row"] = list(observation.shape[1:])
    return out


def _keys(data) -> list:
    """The leaf keys of a TensorDict or of nested mappings (tuples for nested ones)."""
    if hasattr(data, "batch_size") and hasattr(data, "keys"):
        return list(data.keys(include_nested=True, leaves_only=True))
    out: list = []
    for key, value in data.items():
        out += [(key, *(k if isinstance(k, tuple) else (k,))) for k in _keys(value)] \
            if isinstance(value, Mapping) else [key]
    return out
