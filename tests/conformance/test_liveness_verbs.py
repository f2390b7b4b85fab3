"""The verbs that ask over time, on scripted components (no Ray): check_alive
records every change of is_alive()'s answer and stops as its args say;
check_error raises the first error the call raises, or says how often it
returned."""
import time
from types import SimpleNamespace

import pytest

from conformance.ops.scenario import Op
from conformance.ops.verbs import VERBS


class Scripted:
    """An adapter whose is_alive() answers ``answers`` by time since creation
    (``[(from_s, value), ...]``) and whose start() raises once ``fails_at`` s
    have passed."""

    def __init__(self, answers=(), fails_at=None):
        self.t0, self.answers, self.fails_at, self.starts = time.monotonic(), answers, fails_at, 0

    def is_alive(self, target, obj):
        now = time.monotonic() - self.t0
        return [v for t, v in self.answers if t <= now][-1]

    def start(self, obj):
        self.starts += 1
        if self.fails_at is not None and time.monotonic() - self.t0 >= self.fails_at:
            raise RuntimeError("the actor died") from ConnectionError("gone")


def run(verb, adapter, **args):
    ctx = SimpleNamespace(adapter=adapter, objects={"collector": object()})
    return VERBS[verb].run(ctx, Op(verb, "collector", args))


def test_check_alive_judges_a_healthy_component_on_its_first_answer():
    res = run("check_alive", Scripted([(0, False), (0.2, True)]), expect=True)
    assert (res["answers"], res["reached"], res["calls"]) == ([[res["answers"][0][0], False]],
                                                               None, 1)


def test_check_alive_waits_for_a_death_then_watches_it_stay():
    res = run("check_alive", Scripted([(0, True), (0.3, False), (0.8, True)]),
              expect=False, within=2.0, stays=1.0)
    assert [v for _, v in res["answers"]] == [True, False, True]  # dead, then back
    assert 0.3 <= res["reached"] < 0.6 and res["elapsed"] >= res["reached"] + 1.0


def test_check_alive_gives_up_after_within():
    res = run("check_alive", Scripted([(0, True)]), expect=False, within=0.5)
    assert res["reached"] is None and 0.5 < res["elapsed"] < 1.0


def test_check_error_raises_what_the_call_raises_with_its_chain():
    adapter = Scripted(fails_at=0.3)
    with pytest.raises(RuntimeError, match="the actor died") as info:
        run("check_error", adapter, call="start", cause="actor", within=2.0)
    assert isinstance(info.value.__cause__, ConnectionError) and adapter.starts >= 2


def test_check_error_reports_a_call_that_keeps_returning():
    res = run("check_error", Scripted(), call="start", cause="actor", within=0.5)
    assert res["returned"] >= 3 and res["elapsed"] >= 0.5


def test_the_history_records_an_errors_chain():
    from conformance.ops.history import describe_error

    try:
        try:
            raise ValueError("the env fails on purpose")
        except ValueError as cause:
            raise RuntimeError("background work stopped") from cause
    except RuntimeError as exc:
        described = describe_error(exc)
    assert described["causes"] == [{"type": "builtins.ValueError",
                                    "message": "the env fails on purpose"}]
