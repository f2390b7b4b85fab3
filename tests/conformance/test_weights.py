"""Policy weights (issue #27): the ``weights`` verb and feature, the policy a
collector is built with, the ``weights`` family, its scripts and its
oracle's inputs. No Ray: the weights are loaded into a module in this
process, as the reference's actor does."""
import numpy as np
import pytest

from conformance import catalog
from conformance.adapter import FEATURES, Spec
from conformance.adapters import regressions, snippets
from conformance.adapters.reference import ReferenceAdapter
from conformance.judge import oracles
from conformance.ops import verbs
from conformance.ops.scenario import Op
from conformance.repro.script import generate


def test_the_weights_verb_is_declared_once_with_its_feature_use_and_script():
    verb = verbs.VERBS["weights"]
    op = Op("weights", "collector", {"form": "dict", "action": 0, "workers": [1]})
    assert verbs.optional_feature_of(op) == "weights" and "weights" in FEATURES
    assert verb.unchecks == ("weights_take_effect",)
    assert verbs.needs_of(op) == set()  # an adapter without it runs the scenario
    assert verbs.deadline_of(op, ReferenceAdapter(), Spec()) == verbs.WEIGHTS_DEADLINE
    assert not verb.expects_raise(op)
    assert verb.expects_raise(Op("weights", "collector", {"cause": "actor"}))
    assert verb.expects_raise(Op("weights", "collector", {"form": "list", "fail": "invalid:weights"}))
    assert snippets.default_lines(op, Spec()) == [
        "collector.update_policy_weights_(weights_of('dict', 0), worker_ids=[1])",
        "return 'weights of action 0 (dict) sent to actors [1]'"]
    # after teardown: the use call, needing the feature as the verb does
    use = Op("use", "collector", {"call": "weights"})
    assert "weights" in verbs.use_calls()
    assert verbs.optional_feature_of(use) == "weights"
    assert verbs.optional_feature_of(Op("use", "collector", {"call": "start"})) == "background"
    assert verbs.optional_feature_of(Op("use", "collector", {"call": "iterate"})) is None
    assert snippets.default_lines(use, Spec())[-1] == \
        "return repr(collector.update_policy_weights_(weights_of('module', 1)))"
    assert verb.walk is None  # walks build random-policy collectors (tests/.../WALKS_DIGEST)


def test_the_reference_builds_a_policy_module_only_when_asked():
    adapter = ReferenceAdapter()
    assert "weights" in adapter.features
    assert adapter.constructor_args(Spec(), "collector")[0][1] is None
    policy = adapter.constructor_args(Spec(policy="module"), "collector")[0][1]
    from conformance.policies import BUILT_ACTION, CartPolePolicy

    assert isinstance(policy, CartPolePolicy)
    assert BUILT_ACTION == oracles.BUILT_ACTION
    with pytest.raises(ValueError, match="unknown policy"):
        adapter.constructor_args(Spec(policy="mlp"), "collector")
    lines = adapter.script_lines(Op("construct", "collector", {"policy": "module"}),
                                 Spec(policy="module"))
    assert "    CartPolePolicy()," in lines
    assert "    None," in adapter.script_lines(Op("construct", "collector"), Spec())
    # the construct arg reaches the spec (the driver's and the script's)
    ctx = type("Ctx", (), {"spec": Spec()})()
    assert verbs._spec_for(ctx, Op("construct", "collector", {"policy": "module"})).policy == "module"
    assert verbs._spec_for(ctx, Op("construct", "collector")).policy is None


@pytest.mark.parametrize("form", ["module", "tensordict", "dict"])
def test_each_form_loads_into_the_policy_and_fixes_its_action(form):
    """As the reference does it: impl.weights.as_weights in the driver,
    impl.rollout.load_weights in the actor, policy_fn on an observation."""
    import gymnasium as gym

    from conformance.policies import CartPolePolicy, weights_of
    from impl.rollout import load_weights, policy_fn
    from impl.weights import as_weights

    env = gym.make("CartPole-v1")
    policy = CartPolePolicy()
    act = policy_fn(policy, env.action_space)
    obs = [np.asarray(env.reset(seed=s)[0]) for s in range(5)]
    assert {act(o) for o in obs} == {0}
    load_weights(policy, as_weights(weights_of(form, 1)))
    assert {act(o) for o in obs} == {1}


def test_a_list_of_tensors_is_refused_with_a_type_error():
    from conformance.policies import weights_of
    from impl.weights import as_weights

    with pytest.raises(TypeError, match="weights must be an nn.Module"):
        as_weights(weights_of("list", 1))


def test_the_weights_family_sends_every_form_and_marks_four_quick_on_multinode():
    full = [s for s in catalog.scenarios(profile="full") if s.family == "weights"]
    quick = {s.id for s in catalog.scenarios(profile="quick") if s.family == "weights"}
    assert quick == {"weights/multinode/user/forms-and-workers",
                     "weights/multinode/user/collector-sigkill>weights",
                     "weights/multinode/user/tdmodule-policy",
                     "weights/multinode/user/function-policy"}
    forms = {op.args.get("form") for s in full for op in s.ops if op.verb == "weights"}
    assert forms == {"module", "tensordict", "dict", "list"}
    # the catalog's forms are the ones conformance.policies makes (which imports torch)
    from conformance.catalog.families import WEIGHT_FORMS
    from conformance.policies import FORMS, INVALID_FORM

    assert WEIGHT_FORMS == FORMS and forms == {*FORMS, INVALID_FORM}
    for s in full:
        assert "weights" not in s.requires  # optional: unsupported, not skipped
        built = [op for op in s.ops if op.verb == "construct" and op.target == "collector"]
        # a policy module, or the same as a TensorDictModule or a function (*-policy)
        assert built and all(op.args.get("policy") in ("module", "tdmodule", "function")
                             for op in built), s.id
        # an action read is judged on sync batches only (one row per actor)
        if any(op.args.get("read_actions") for op in s.ops):
            assert all(op.args.get("sync") for op in built), s.id
    ids = {s.id for s in full}
    for variant in ("under-thread", "after-teardown", "invalid-form", "collector-ray_kill>weights"):
        assert f"weights/local/impl/{variant}" in ids
    # without a buffer, no background thread to send weights under
    no_buffer = {s.id for s in catalog.scenarios(profile="full", components=("collector",))
                 if s.family == "weights"}
    assert "weights/local/user/under-thread" not in no_buffer
    assert "weights/local/user/forms-and-workers" in no_buffer


def test_the_regression_variants_are_caught_by_the_quick_weights_scenarios():
    first = regressions.REGRESSIONS["weights-first-actor-only"].catches[0]
    acks = regressions.REGRESSIONS["weights-not-acknowledged"].catches[0]
    assert first.oracles == ("weights_take_effect",) and acks.oracles == ("errors_surface",)
    quick = {s.id for s in catalog.scenarios(profile="quick")}
    assert "weights/multinode/user/forms-and-workers" in set(first.ids()) & quick
    assert "weights/multinode/user/collector-sigkill>weights" in set(acks.ids()) & quick


def test_a_weights_script_defines_the_policy_once_and_sends_each_form():
    scenario = catalog.find("weights/multinode/user/forms-and-workers")
    text = generate(scenario, ReferenceAdapter(), impl_name="reference")
    assert text.count("class CartPolePolicy(nn.Module):") == 1
    assert text.count("def weights_of(form") == 1
    assert "    CartPolePolicy()," in text
    # by the documented keyword names, as the reference adapter calls it
    assert ("collector.update_policy_weights_(policy_or_weights=weights_of('tensordict', 0), "
            "worker_ids=[0])") in text
    assert ("collector.update_policy_weights_(policy_or_weights=weights_of('dict', 0), "
            "worker_ids=1)") in text
    assert "    seen.append([sorted(set(row.tolist())) for row in rows])" in text
    compile(text, "weights.py", "exec")
    after = generate(catalog.find("weights/local/user/after-teardown"), ReferenceAdapter())
    assert "return repr(collector.update_policy_weights_(weights_of('module', 1)))" in after
    compile(after, "after.py", "exec")
    # a TensorDictModule policy: built from the script's own copy of it
    td = generate(catalog.find("weights/multinode/user/tdmodule-policy"), ReferenceAdapter())
    assert td.count("def CartPoleTDPolicy(") == 1 and "    CartPoleTDPolicy()," in td
    compile(td, "td.py", "exec")
