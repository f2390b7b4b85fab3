"""Splitting a run into shards (conformance/reports/shard.py): every scenario in
exactly one shard, the same split in every process whatever the order of the
ids and PYTHONHASHSEED, balanced by a previous report's durations."""
import json
import os
import random
import subprocess
import sys

import pytest

from conformance import catalog
from conformance.reports import shard
from fixtures.rayenv import REPO_ROOT

FULL = [s.id for s in catalog.scenarios(("local", "multinode"), "full")]


def synthetic_durations(ids, seed=7):
    """Durations shaped like the suite's: local ~6 s, multinode ~2 s, a few
    hangs and long batches of 30-90 s."""
    rng = random.Random(seed)
    out = {}
    for sid in ids:
        base = 6.0 if "/local/" in sid else 2.0
        out[sid] = round(base * rng.uniform(0.7, 1.5) + (rng.uniform(30, 90) if rng.random() < 0.03
                                                          else 0.0), 2)
    return out


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("2/4", (2, 4)), (" 4/4 ", (4, 4))])
def test_parse(text, expected):
    got = shard.Shard.parse(text)
    assert (got.index, got.count) == expected and str(got) == text.strip()


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "2/0", "a/b", "-1/2", "1/2/3", ""])
def test_parse_refuses(text):
    with pytest.raises(ValueError, match="is not a shard I/N"):
        shard.Shard.parse(text)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, len(FULL), len(FULL) + 3])
@pytest.mark.parametrize("timed", [False, True])
def test_every_scenario_in_exactly_one_shard(count, timed):
    durations = synthetic_durations(FULL) if timed else None
    parts = shard.plan(FULL, count, durations)
    assert len(parts) == count
    together = [sid for p in parts for sid in p.ids]
    assert len(together) == len(FULL) and set(together) == set(FULL)
    for p in parts:
        assert list(p.ids) == sorted(p.ids)


def test_the_split_ignores_the_order_of_the_ids():
    durations = synthetic_durations(FULL)
    want = shard.plan(FULL, 4, durations)
    for seed in range(5):
        shuffled = list(FULL)
        random.Random(seed).shuffle(shuffled)
        assert shard.plan(shuffled, 4, durations) == want
        assert shard.plan(reversed(shuffled), 4, dict(reversed(durations.items()))) == want


SPLIT_AS_JSON = """
import json, random, sys
from conformance import catalog
from conformance.reports import shard
ids = [s.id for s in catalog.scenarios(("local", "multinode"), "full")]
rng = random.Random(3)
durations = {i: round(rng.uniform(1, 9), 2) for i in ids[::2]}  # half of them timed
ids = list(set(ids))  # iteration order: PYTHONHASHSEED's
print(json.dumps([[list(p.ids), p.estimate] for n in (1, 2, 4)
                  for p in shard.plan(ids, n, durations)]))
"""


def test_the_split_is_the_same_under_every_hash_seed():
    """Each shard's job and each of its xdist workers split on their own;
    set and dict orders differ between them (PYTHONHASHSEED)."""
    outs = set()
    for seed in ("0", "1", "2", "12345"):
        done = subprocess.run([sys.executable, "-c", SPLIT_AS_JSON], cwd=REPO_ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                              text=True, timeout=120, check=True)
        outs.add(done.stdout)
    assert len(outs) == 1
    assert len(json.loads(outs.pop())) == 1 + 2 + 4


def test_without_durations_the_sorted_ids_are_dealt_round_robin():
    ordered = sorted(FULL)
    parts = shard.plan(reversed(FULL), 3)
    for k, p in enumerate(parts):
        assert p.ids == tuple(sorted(ordered[k::3]))
        assert p.estimate == len(p.ids) * shard.UNIFORM


def test_durations_balance_the_shards():
    durations = synthetic_durations(FULL)
    total, longest = sum(durations.values()), max(durations.values())
    for count in (2, 4, 8):
        parts = shard.plan(FULL, count, durations)
        loads = [sum(durations[i] for i in p.ids) for p in parts]
        assert [round(x, 2) for x in loads] == [p.estimate for p in parts]
        # the greedy bound: no shard longer than the mean plus one scenario
        assert max(loads) <= total / count + longest
        # and well balanced on the suite's shape (here within 2 %)
        assert max(loads) / (total / count) < 1.02, loads
        # better than the split by id measured with the same durations
        by_id = [sum(durations[i] for i in p.ids) for p in shard.plan(FULL, count)]
        assert max(loads) < max(by_id)


def test_a_long_scenario_gets_a_shard_of_its_own():
    ids = [f"f/local/user/v{i}" for i in range(9)]
    durations = {i: 1.0 for i in ids} | {ids[4]: 100.0}
    parts = shard.plan(ids, 3, durations)
    alone = next(p for p in parts if ids[4] in p.ids)
    assert alone.ids == (ids[4],) and alone.estimate == 100.0
    assert sorted(len(p.ids) for p in parts) == [1, 4, 4]


def test_a_scenario_missing_from_the_durations_counts_as_their_median():
    ids = ["a", "b", "c", "d", "new"]
    est = shard.estimates(ids, {"a": 1.0, "b": 2.0, "c": 10.0, "d": 3.0, "elsewhere": 500.0})
    assert est == {"a": 1.0, "b": 2.0, "c": 10.0, "d": 3.0, "new": 2.5}  # median of a-d only
    assert shard.estimates(["x", "y"], {"elsewhere": 5.0}) == {"x": shard.UNIFORM,
                                                               "y": shard.UNIFORM}


def test_durations_of_a_report():
    doc = {"scenarios": [{"id": "a", "duration": 5.2}, {"id": "b", "duration": 0},
                         {"id": "c", "duration": None}, {"id": "d"}]}
    assert shard.durations(doc) == {"a": 5.2, "b": 0.0}


def test_plan_refuses_duplicate_ids_and_no_shard():
    with pytest.raises(ValueError, match="not unique"):
        shard.plan(["a", "a"], 2)
    with pytest.raises(ValueError, match="at least 1"):
        shard.plan(["a"], 0)


def test_record_fingerprints_the_selection_not_its_order():
    parts = shard.plan(FULL, 2)
    one = shard.record(shard.Shard(1, 2), FULL, parts[0], profile="full")
    two = shard.record(shard.Shard(2, 2), reversed(FULL), parts[1], profile="full")
    assert one["selection"] == two["selection"] == shard.digest(set(FULL))
    assert one["selected"] == len(FULL) and one["assigned"] + two["assigned"] == len(FULL)
    assert (one["index"], one["count"], one["profile"]) == (1, 2, "full")
    assert shard.digest(FULL[1:]) != one["selection"]
