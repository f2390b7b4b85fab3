"""What a collector's batch says about its env steps
(conformance.ops.transitions): a real reference batch holds nothing wrong,
and each break of torchrl's layout is named with its count of rows."""
import numpy as np
import pytest

from conformance.ops.transitions import batch_steps

T = 8


def flat(done_at=3, reward=1.0):
    """T consecutive steps of one env, done at row ``done_at`` (reset after it)."""
    obs = np.arange(T * 4, dtype=np.float32).reshape(T, 4)
    next_obs = obs.copy()
    next_obs[:-1] = obs[1:]
    next_obs[-1] = obs[-1] + 100
    next_obs[done_at] = -obs[done_at]  # the terminal step's observation; row done_at+1 is a reset
    term = np.zeros((T, 1), bool)
    term[done_at] = True
    return {"observation": obs, "action": np.zeros(T, np.int64),
            ("next", "observation"): next_obs,
            ("next", "reward"): np.full((T, 1), reward, np.float32),
            ("next", "done"): term.copy(), ("next", "terminated"): term,
            ("next", "truncated"): np.zeros((T, 1), bool)}


def td(rows, batch=(T,)):
    from impl.batches import from_flat

    return from_flat(rows, list(batch))


def test_the_reference_collectors_batches_hold_consecutive_steps_async_and_sync():
    import gymnasium as gym

    from impl.batches import stack_flat
    from impl.rollout import Stepper

    one, two = (Stepper(gym.make("CartPole-v1"), None, seed=s) for s in (1, 2))
    assert batch_steps(td(one.collect(200), (200,))) == {"rows": 200, "faults": []}
    sync = td(stack_flat([one.collect(100), two.collect(100)]), (2, 100))
    assert batch_steps(sync) == {"rows": 200, "faults": []}


def test_a_well_formed_batch_has_no_fault():
    assert batch_steps(td(flat())) == {"rows": T, "faults": []}


@pytest.mark.parametrize("break_it, fault", [
    (lambda r: r.update({("next", "reward"): np.ones((T, 2), np.float32)}),
     "next/reward has shape [8, 2], not [8, 1] (one wide)"),
    (lambda r: r.update({("next", "truncated"): np.zeros((T, 0), bool)}),
     "next/truncated has shape [8, 0], not [8, 1] (one wide)"),
    (lambda r: r[("next", "reward")].__setitem__(slice(4, None), 0.0),
     "reward not 1.0 (every catalog env pays 1.0 a step): 4 of 8 rows"),
    (lambda r: r.update({("next", "done"): np.zeros((T, 1), bool)}),
     "done is not terminated | truncated: 1 of 8 rows; "
     "not done, yet not followed by the step from its next observation: 1 of 8 rows"),
    (lambda r: r.update({"observation": r["observation"][[0, 1, 2, 3, 4, 6, 5, 7]]}),
     "not done, yet not followed by the step from its next observation: 2 of 8 rows"),
    (lambda r: r.update({("next", "observation"): r[("next", "observation")][:, :2].copy()}),
     "observation [8, 4] and next observation [8, 2] are not rows of one shape"),
])
def test_each_break_of_the_layout_is_named_with_its_rows(break_it, fault):
    rows = flat()
    break_it(rows)
    assert "; ".join(batch_steps(td(rows))["faults"]) == fault


def test_a_chain_is_read_along_the_last_batch_dimension_only():
    # two actors' rows stacked: the end of row 0 is not followed by the start of row 1
    from impl.batches import stack_flat

    assert batch_steps(td(stack_flat([flat(), flat(done_at=5)]), (2, T)))["faults"] == []


def test_buffer_modes_counts_are_not_read_and_a_batch_of_another_layout_breaks_it():
    assert batch_steps(64) is None and batch_steps(None) is None  # buffer mode: frames written
    assert batch_steps([1, 2]) == {"rows": None, "faults": ["a builtins.list, not a TensorDict"]}
    rows = flat()
    del rows[("next", "truncated")]
    assert batch_steps(td(rows)) == {"rows": None, "faults": ["no next/truncated entry"]}


def test_a_batch_the_harness_cannot_read_is_unreadable_not_a_fault():
    import torch

    rows = td(flat())
    rows.set(("next", "reward"), torch.ones(T, 1, dtype=torch.bfloat16))  # numpy has no bfloat16
    assert set(batch_steps(rows)) == {"unreadable"}
