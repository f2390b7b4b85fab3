"""What rests on each convention of the adapter contract, op by op.

A convention (``conformance.adapter.CONVENTIONS``) is a feature no scenario
needs: an implementation that lacks one runs every scenario as written, and
the findings of the oracles that rest on it, about the ops that rely on it,
are *not checked*: dropped from the judgement and listed, with the reason,
in the report entry's ``not_checked`` (degrade, don't skip; as a verb's
``optional_feature`` does for a whole op). A finding is tied to its op by
its label (``op N (...)``, ``oracles._label``); a finding tied to no op is
always judged.

Each rule here is ``oracle -> (op, scenario) -> bool``: True when that
oracle's finding about ``op`` rests on the convention.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from conformance.ops.targets import kind_of


def _collector_is_sync(scenario) -> bool:
    """The scenario's collector collects in sync mode (its constructor's
    ``sync`` argument, else the spec's)."""
    for op in scenario.ops:
        if op.verb == "construct" and kind_of(op.target) == "collector":
            return bool(op.args.get("sync", scenario.spec.get("sync", False)))
    return bool(scenario.spec.get("sync", False))


def _collects(op) -> bool:
    return op.verb in ("iterate", "exhaust") and kind_of(op.target) == "collector"


def _refuses(*what: str) -> Callable:
    """The constructor the scenario expects to refuse one of ``what`` (``fail=invalid:...``)."""
    return lambda op, scenario: op.verb == "construct" and op.args.get("fail") in {
        f"invalid:{w}" for w in what}


def _refuses_budget(op, scenario) -> bool:
    """A submit the scenario expects to refuse its step budget."""
    return op.verb == "submit" and op.args.get("fail") == "invalid:eval_max_steps"


def _builds_for_a_refused_budget(op, scenario) -> bool:
    """The eval worker's constructor in a scenario whose submit must refuse
    the step budget: an implementation that takes the budget at construction
    (no ``async_eval``: RLlib's evaluation_duration) refuses it there."""
    return op.verb == "construct" and kind_of(op.target) == "evaluator" and any(
        _refuses_budget(o, scenario) for o in scenario.ops)


def _endless(scenario) -> bool:
    return scenario.spec.get("total_frames") == -1


@dataclass(frozen=True)
class Convention:
    feature: str
    #: oracle -> (op, scenario) -> True when its finding about op rests on it
    unchecks: dict
    #: (op, scenario) -> True: the op may raise for want of the convention (a
    #: constructor refusing an argument it does not take), as ``may_fail``
    may_refuse: Callable = field(default=lambda op, scenario: False)


CONVENTIONS = {c.feature: c for c in (
    Convention("frame_budget", {
        "exhaustion_auto_shutdown": lambda op, s: op.verb == "exhaust",
        "batch_counts": lambda op, s: op.verb == "exhaust",
        "fails_clearly": _refuses("total_frames"),
    }),
    Convention("endless", {
        "batch_counts": lambda op, s: _collects(op) and _endless(s),
    }, may_refuse=lambda op, s: op.verb == "construct" and kind_of(op.target) == "collector"
        and _endless(s)),
    Convention("batch_size", {
        "batch_counts": lambda op, s: op.verb == "exhaust",
        "batch_sizes": lambda op, s: _collects(op),
        "fails_clearly": _refuses("frames_per_batch", "fractional_frames_per_batch"),
    }),
    Convention("sync_division", {
        "batch_counts": lambda op, s: _collects(op) and _collector_is_sync(s),
        "batch_sizes": lambda op, s: _collects(op) and _collector_is_sync(s),
        "fails_clearly": _refuses("sync_divisible"),
    }),
    Convention("async_eval", {
        "use_after_close_clear_error": lambda op, s: op.verb == "use"
        and op.args.get("call") == "submit",
        "poll_waits_its_timeout": lambda op, s: op.verb == "poll",
        # an emulated poll runs the evaluation: its timeout is the convention's
        "calls_within_timeout": lambda op, s: op.verb == "poll",
        "poll_returns_each_result_once": lambda op, s: op.verb == "poll",
        "fails_clearly": _refuses_budget,
    }, may_refuse=_builds_for_a_refused_budget),
    Convention("num_collectors", {
        "fails_clearly": _refuses("env_ids_count"),
    }),
    Convention("transition_batches", {
        "batches_hold_steps": lambda op, s: _collects(op),
    }),
    Convention("eval_episode", {
        "eval_episode_consistent": lambda op, s: op.verb == "poll",
    }),
    Convention("keeps_own_runtime", {
        "owned_runtime_kept": lambda op, s: op.verb == "teardown" and s.owner == "impl",
    }),
    Convention("logs_unraised_errors", {
        "unraised_error_logged": lambda op, s: True,
    }),
    Convention("quiet_when_healthy", {
        "quiet_when_healthy": lambda op, s: True,
    }),
    Convention("writes_within_budget", {
        "batch_counts": lambda op, s: op.verb == "check_data" and "at_most" in op.args,
    }),
    Convention("leaves_ray_as_found", {
        "failed_build_leaves_ray_as_found": lambda op, s: op.verb == "construct",
    }),
    Convention("repr_names_state", {
        "repr_names_state": lambda op, s: op.verb == "describe",
    }),
    Convention("prompt_teardown", {
        "teardown_prompt_when_healthy": lambda op, s: op.verb == "teardown",
    }),
    Convention("documented_defaults", {
        "defaults_as_documented": lambda op, s: op.verb == "construct",
        "ready_bound_as_documented": lambda op, s: op.verb == "construct",
    }),
)}


def _missing(features) -> list:
    return [] if features is None else [c for f, c in CONVENTIONS.items() if f not in features]


def not_checked(scenario, features) -> dict[int, dict[str, str]]:
    """``{op index: {oracle: why}}``: what is not checked in ``scenario`` for
    an implementation with ``features`` (None: every feature)."""
    out: dict = {}
    for conv in _missing(features):
        for i, op in enumerate(scenario.ops):
            for oracle, rests in conv.unchecks.items():
                if rests(op, scenario):
                    out.setdefault(i, {}).setdefault(
                        oracle, f"op {i} ({op.verb}{' ' + op.target if op.target else ''}): "
                                f"rests on the {conv.feature} convention, not declared")
    return out


def gaps(scenario, features) -> dict[str, list[str]]:
    """``{oracle: [why, ...]}``: the same, per oracle (the report entry's)."""
    out: dict = {}
    for oracles in not_checked(scenario, features).values():
        for oracle, why in oracles.items():
            out.setdefault(oracle, []).append(why)
    return out


def may_refuse(scenario, features, i: int) -> str | None:
    """The missing convention that allows op ``i`` to raise, or None."""
    op = scenario.ops[i]
    return next((c.feature for c in _missing(features) if c.may_refuse(op, scenario)), None)
