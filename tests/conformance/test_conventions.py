"""A convention the implementation does not declare: the oracles resting on
it are not checked for the ops that rely on it (their findings dropped, the
entry's not_checked says why), everything else is judged as always."""
from conformance.judge import conventions
from conformance.adapter import CONVENTIONS, FEATURES
from conformance.adapters.reference import ReferenceAdapter
from conformance.judge.verdict import decide
from tests.conformance.test_oracles import ALL, end, err, iterated, judge, run_of


def without(*features):
    return ALL - set(features)


def test_every_convention_is_a_documented_feature_the_reference_declares():
    assert set(CONVENTIONS) == set(conventions.CONVENTIONS)
    assert set(CONVENTIONS) <= set(FEATURES) and set(CONVENTIONS) <= ALL
    for conv in conventions.CONVENTIONS.values():
        assert "not checked" in FEATURES[conv.feature], conv.feature


def test_a_sync_batch_not_divided_fails_unless_the_convention_is_not_declared():
    # each of 2 actors yields frames_per_batch: 4 batches of 128 frames until 512
    ops = [end(0, "construct", "collector", args={"sync": True}),
           end(1, "exhaust", "collector", result={"batches": 4, "frames": 512},
               probe={"actors": {"collector": {}}})]
    declared = run_of(ops, features=ALL)
    assert judge(declared)["batch_counts"] == [
        "op 1 (exhaust collector): 4 batches until total_frames=512; 8 expected "
        "(frames_per_batch=64)"]
    lacking = run_of(ops, features=without("sync_division"))
    assert decide(lacking).verdict == "pass"
    why = ["op 1 (exhaust collector): rests on the sync_division convention, not declared"]
    assert conventions.gaps(lacking.scenario, lacking.features) == {
        "batch_counts": why, "batch_sizes": why}
    # an async collector's batches are still counted
    async_ops = [end(0, "construct", "collector", args={"sync": False}), ops[1]]
    assert "batch_counts" in judge(run_of(async_ops, features=without("sync_division")))


def test_a_constructor_that_cannot_refuse_is_not_judged_for_it_only():
    built = end(0, "construct", "collector", args={"fail": "invalid:sync_divisible"})
    assert judge(run_of([built], features=ALL))["fails_clearly"] == [
        "op 0 (construct collector) with invalid:sync_divisible did not raise"]
    assert judge(run_of([built], features=without("sync_division", "batch_size"))) == {}
    # another invalid argument is judged: its convention is declared
    zero = end(0, "construct", "collector", args={"fail": "invalid:frames_per_batch"})
    assert "fails_clearly" in judge(run_of([zero], features=without("sync_division")))
    assert judge(run_of([zero], features=without("batch_size"))) == {}


def test_a_refusal_the_implementation_has_no_argument_for_is_not_judged():
    # a fractional frames_per_batch rests on batch_size, as the integer one does
    half = end(0, "construct", "collector", args={"fail": "invalid:fractional_frames_per_batch"})
    assert "fails_clearly" in judge(run_of([half], features=ALL))
    assert judge(run_of([half], features=without("batch_size"))) == {}
    # one env id too many: only a collector that takes num_collectors apart can refuse it
    ids = end(0, "construct", "collector", args={"fail": "invalid:env_ids_count"})
    assert "fails_clearly" in judge(run_of([ids], features=ALL))
    assert judge(run_of([ids], features=without("num_collectors"))) == {}
    # a step budget of 0: submit refuses it with async_eval; without it (RLlib takes
    # the budget at construction) the constructor may refuse it, no setup-error
    accepted = [end(0, "construct", "evaluator"),
                end(1, "submit", "evaluator", args={"fail": "invalid:eval_max_steps"})]
    assert judge(run_of(accepted, spec={"eval_max_steps": 0}, features=ALL))["fails_clearly"] == [
        "op 1 (submit evaluator) with invalid:eval_max_steps did not raise"]
    assert judge(run_of(accepted, spec={"eval_max_steps": 0},
                        features=without("async_eval"))) == {}
    refused = [end(0, "construct", "evaluator", status="raised",
                   error=err("builtins.ValueError", "evaluation_duration must be >= 1")),
               end(1, "submit", "evaluator", status="skipped",
                   args={"fail": "invalid:eval_max_steps"},
                   result={"reason": "no evaluator: never built"})]
    assert decide(run_of(refused, spec={"eval_max_steps": 0},
                         features=without("async_eval"))).verdict == "pass"
    assert decide(run_of(refused, spec={"eval_max_steps": 0},
                         features=ALL)).verdict == "setup-error"


def test_no_frame_budget_leaves_the_collector_up_after_exhaustion_unchecked():
    exhausted = end(0, "exhaust", "collector", result={"batches": 8, "frames": 512},
                    probe={"actors": {"collector": {"c1": {"state": "ALIVE"}}}})
    assert judge(run_of([exhausted], features=ALL))["exhaustion_auto_shutdown"] == [
        "op 0 (exhaust collector): collector actor c1 still ALIVE after exhaustion"]
    assert judge(run_of([exhausted], features=without("frame_budget"))) == {}


def test_submit_after_close_without_async_eval_is_unchecked_and_poll_still_judged():
    closed = end(0, "teardown", "evaluator", result={"calls": []})
    submit = end(1, "use", "evaluator", args={"call": "submit"})
    poll = end(2, "use", "evaluator", args={"call": "poll"}, status="raised",
               error=err("builtins.ValueError", "doesn't have an env!"))
    assert judge(run_of([closed, submit, poll], features=without("async_eval"))) == {
        "use_after_close_clear_error": [
            "op 2 (use evaluator) poll() after teardown raised an unclear builtins.ValueError: "
            "doesn't have an env!"]}
    assert len(judge(run_of([closed, submit, poll], features=ALL))[
        "use_after_close_clear_error"]) == 2


def test_a_constructor_refusing_total_frames_minus_one_without_endless_is_no_setup_error():
    refused = end(0, "construct", "collector", status="raised",
                  error=err("builtins.ValueError", "total_frames must be >= 0"))
    short = end(1, "iterate", "collector", status="skipped", args={"batches": 2},
                result={"reason": "no collector: never built"})
    endless = {"total_frames": -1}
    assert decide(run_of([refused, short], spec=endless, features=ALL)).verdict == "setup-error"
    assert decide(run_of([refused, short], spec=endless,
                         features=without("endless"))).verdict == "pass"
    # the same refusal of an ordinary total_frames is a setup error either way
    assert decide(run_of([refused, short], features=without("endless"))).verdict == "setup-error"
    # built, it must still count the batches asked for, unless -1 is not declared
    none = end(1, "iterate", "collector", args={"batches": 2}, result={"batches": 0})
    built = end(0, "construct", "collector")
    assert "batch_counts" in judge(run_of([built, none], spec=endless, features=ALL))
    assert judge(run_of([built, none], spec=endless, features=without("endless"))) == {}


UNDECLARED = "tests.conformance.undeclared_convention:UndividedAdapter"
DECLARED = "regression:sync-batch-not-divided"


def test_an_implementation_lacking_a_convention_gets_not_checked_instead_of_a_failure(
        session, tmp_path):
    from conformance import catalog
    from conformance.run.execute import failure_message, run_scenario
    from conformance.adapters.registry import load_adapter

    cases = {  # scenario -> what rests on sync_division there
        "construction_failure/local/user/collector-invalid-sync_divisible": ["fails_clearly"],
        "exhaustion/local/user/sync": ["batch_counts", "batch_sizes"],
    }
    for k, (sid, oracles) in enumerate(cases.items()):
        scenario = catalog.find(sid)
        lacking = run_scenario(scenario, UNDECLARED, load_adapter(UNDECLARED), session,
                               str(tmp_path / f"undeclared{k}"))
        assert lacking["verdict"] == "pass", failure_message(lacking)
        assert lacking["not_checked"] == oracles, lacking["not_checked"]
        for oracle in oracles:
            assert "sync_division" in lacking["evidence"]["not_checked"][oracle][0]
        # the same code declaring the convention fails where it breaks it
        claimed = run_scenario(scenario, DECLARED, load_adapter(DECLARED), session,
                               str(tmp_path / f"declared{k}"))
        assert (claimed["verdict"], claimed["oracles"], claimed["not_checked"]) == (
            "fail", oracles, []), failure_message(claimed)


def test_a_batch_is_read_as_env_steps_only_where_transition_batches_is_declared():
    bad = {"batches": 2, "frames": 128, "sizes": [64, 64], "steps": [
        {"batch": 2, "rows": 64, "faults": ["done is not terminated | truncated: 3 of 64 rows"]}]}
    assert "batches_hold_steps" in judge(run_of(iterated(bad), features=ALL))
    lacking = run_of(iterated(bad), features=without("transition_batches"))
    assert decide(lacking).verdict == "pass"
    assert conventions.gaps(lacking.scenario, lacking.features) == {"batches_hold_steps": [
        "op 1 (iterate collector): rests on the transition_batches convention, not declared"]}


def test_batch_sizes_rest_on_batch_size_and_not_on_the_layout():
    doubled = {"batches": 2, "frames": 256, "sizes": [128, 128]}
    assert "batch_sizes" in judge(run_of(iterated(doubled), features=without("transition_batches")))
    assert judge(run_of(iterated(doubled), features=without("batch_size"))) == {}


def test_an_evaluation_is_read_as_an_episode_only_where_eval_episode_is_declared():
    polled = [end(0, "construct", "evaluator"), end(1, "submit", "evaluator"),
              end(2, "poll", "evaluator", result={"ready": True,
                                                  "episode": {"steps": 11, "return": 12.0}})]
    assert "eval_episode_consistent" in judge(run_of(polled, features=ALL))
    lacking = run_of(polled, features=without("eval_episode"))
    assert decide(lacking).verdict == "pass"
    assert conventions.gaps(lacking.scenario, lacking.features) == {"eval_episode_consistent": [
        "op 2 (poll evaluator): rests on the eval_episode convention, not declared"]}


def test_the_adapter_reads_the_references_result_as_an_episode_and_nothing_else():
    adapter = ReferenceAdapter()
    assert adapter.episode({"reward": 11.0, "steps": 11}) == {"steps": 11, "return": 11.0}
    assert adapter.episode([11, 11.0]) is None and adapter.episode({"steps": 3}) is None
