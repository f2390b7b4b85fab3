"""The reference's wait for what a teardown released (``impl.resources``),
per node, against a view the test sets (no Ray): a release is seen on the
node its actors ran on, never in the cluster's sum."""

import pytest

from impl import resources


@pytest.fixture
def view(monkeypatch):
    """The nodes' resources as the test sets them: ``free`` changes, ``total`` stays."""
    state = {"free": {"a": {"CPU": 1.5}, "b": {"CPU": 2.0}},
             "total": {"a": {"CPU": 2.0}, "b": {"CPU": 2.0}}}
    monkeypatch.setattr(resources, "_free", lambda: {n: dict(v) for n, v in state["free"].items()})
    monkeypatch.setattr(resources, "_total", lambda: state["total"])
    monkeypatch.setattr(resources, "RELEASE_WAIT", 0.05)
    monkeypatch.setattr(resources, "SHOWN_WAIT", 0.05)
    return state


def test_merge_sums_per_node_and_resource():
    into = {"a": {"CPU": 0.25}}
    assert resources.merge(into, {"a": {"CPU": 0.25, "GPU": 1.0}, "b": {"CPU": 1.0}}) == {
        "a": {"CPU": 0.5, "GPU": 1.0}, "b": {"CPU": 1.0}}


def test_release_is_seen_on_its_node_not_in_the_sum(view):
    release = resources.Release({"a": {"CPU": 0.5}})
    assert release.expected == {"a": {"CPU": 2.0}}
    # another job frees 0.5 CPU on b: the sum is met, node a is not
    view["free"]["b"]["CPU"] = 2.0
    view["free"]["a"]["CPU"] = 1.5
    assert release.wait(deadline=float("inf")) is False
    view["free"]["a"]["CPU"] = 2.0
    assert release.wait(deadline=float("inf")) is True


def test_a_node_that_left_holds_nothing_and_a_lagging_view_is_capped(view):
    # the view did not show the actors' CPU taken yet: at most total - held is free
    view["free"]["a"]["CPU"] = 2.0
    release = resources.Release({"a": {"CPU": 0.5}, "gone": {"CPU": 1.0}})
    assert release.expected == {"a": {"CPU": 2.0}}
    del view["free"]["a"]
    assert release.wait(deadline=float("inf")) is True
    assert resources.Release({}).wait(deadline=0.0) is True


def test_the_view_read_before_the_kill_is_one_that_shows_the_actors_started(view, monkeypatch):
    # the view lags the actors' start: its first two readings show node a's
    # CPU all free, as if the actors had been killed already
    readings = iter([{"a": {"CPU": 2.0}}, {"a": {"CPU": 2.0}}])
    monkeypatch.setattr(resources, "_free", lambda: next(readings, {"a": {"CPU": 1.5}}))
    release = resources.Release({"a": {"CPU": 0.5}})
    assert next(readings, "read") == "read", "Release read the view until it showed the start"
    assert release.expected == {"a": {"CPU": 2.0}}
    assert release.wait(deadline=float("inf")) is False, "the kill is not shown yet: 1.5 free"


def test_a_view_that_never_shows_the_start_is_read_until_the_bound(view, monkeypatch):
    view["free"]["a"]["CPU"] = 2.0  # never shows the actors' 0.5 CPU taken
    readings = []
    monkeypatch.setattr(resources, "_free", lambda: readings.append(1) or {"a": {"CPU": 2.0}})
    release = resources.Release({"a": {"CPU": 0.5}}, deadline=float("inf"))
    assert release.expected == {"a": {"CPU": 2.0}}  # capped: total - held + held
    assert len(readings) > 1, "read again until SHOWN_WAIT ran out"
    readings.clear()
    assert resources.Release({"a": {"CPU": 0.5}}, deadline=0.0).expected == {"a": {"CPU": 2.0}}
    assert len(readings) == 1, "a teardown past its deadline reads the view once, no wait"
