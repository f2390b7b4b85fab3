"""A verb declares everything about itself (issue #28.4): the toy verb below,
one decorated function and nothing else, is proposed by the random walks
(its precondition and effect honoured), written in standalone scripts, called
after teardown by ``use``, and has its needs and deadline, with no other
file edited. No Ray: the verb runs on a stand-in buffer (a list)."""
import hashlib
import json
from types import SimpleNamespace

import pytest

from conformance.adapter import Spec
from conformance.adapters import snippets
from conformance.adapters.reference import ReferenceAdapter
from conformance.catalog import walks
from conformance.ops import verbs
from conformance.ops.scenario import Op, Scenario
from conformance.repro.script import generate


@pytest.fixture
def toy_len():
    """Declare the toy verb for one test; the verb table is restored after."""
    saved = dict(verbs.VERBS)

    def first_read(model) -> bool:
        return model.usable("buffer") and not getattr(model, "toy_read", False)

    def read(model, op) -> None:
        model.toy_read = True

    @verbs.verb(verbs.IMPL, "toy: read the buffer's length (once per walk)",
                needs=lambda op: ("buffer",),
                deadline=lambda op, adapter, spec: 12.0,
                api_script=lambda op, api: [f"return f'toy: {{{api.length}}}'"],
                use=verbs.Use("toy_len", lambda ctx, o: ctx.adapter.buffer_len(o),
                              lambda api: api.length),
                walk=verbs.WalkRule(lambda m: [(5, "buffer", {})] if first_read(m) else [],
                                    read))
    def toy_len(ctx, op):
        return {"frames": ctx.adapter.buffer_len(ctx.objects[op.target])}

    yield "toy_len"
    verbs.VERBS.clear()
    verbs.VERBS.update(saved)


def test_the_walk_model_proposes_a_declared_verb_under_its_precondition(toy_len):
    model = walks._Model("local", "user")
    assert toy_len not in {op.verb for _, op in model.rules()}  # no buffer yet
    model.apply(Op("construct", "buffer"))
    assert (5, Op(toy_len, "buffer")) in model.rules()
    model.apply(Op(toy_len, "buffer"))  # its effect: read once, never proposed again
    assert toy_len not in {op.verb for _, op in model.rules()}

    reading_walks = 0
    for seed in range(1, 21):  # replayed on a model: read only while the buffer is usable
        model, reads = walks._Model("local", "user"), 0
        for op in walks.generate(seed, "local", "user"):
            if op.verb == toy_len:
                assert model.usable("buffer") and reads == 0, (seed, op)
                reads += 1
            if verbs.VERBS[op.verb].walk is not None:
                model.apply(op)
        reading_walks += reads
    assert reading_walks, "no walk of 20 seeds read the buffer with the toy verb"


def test_a_declared_verb_runs_and_is_called_after_teardown_by_use(toy_len):
    ctx = SimpleNamespace(adapter=ReferenceAdapter(), objects={"buffer": [1, 2, 3]})
    assert verbs.VERBS[toy_len].run(ctx, Op(toy_len, "buffer")) == {"frames": 3}
    assert verbs.VERBS["use"].run(ctx, Op("use", "buffer", {"call": toy_len})) == {}
    assert verbs.use_calls()[toy_len].run(ctx, [7]) == 1
    op = Op(toy_len, "buffer")
    assert verbs.needs_of(op) == {"buffer"}
    assert verbs.deadline_of(op, ReferenceAdapter(), None) == 12.0


def test_a_declared_verb_has_its_standalone_script_form(toy_len):
    spec = Spec()
    assert snippets.default_lines(Op(toy_len, "buffer"), spec, length="buffer.size()") == [
        "return f'toy: {buffer.size()}'"]
    assert snippets.default_lines(Op("use", "buffer", {"call": toy_len}), spec) == [
        "# after teardown: the contract wants a clear 'closed' error, at once",
        "return repr(len(buffer))"]

    ops = (Op("construct", "buffer"), Op(toy_len, "buffer"), Op("teardown", "buffer"),
           Op("use", "buffer", {"call": toy_len}))
    scenario = Scenario("toy", "local", "user", "len", ops)
    text = generate(scenario, ReferenceAdapter(), impl_name="reference")
    assert "def op_1():\n    # toy_len buffer\n    return f'toy: {len(buffer)}'\n" in text, text
    assert "def op_3():\n    # use buffer(call=toy_len)\n" in text
    assert "    return repr(len(buffer))\n" in text


#: the sha256 of every walk of the catalog's seeds (each fixture and owner), as
#: generated when the walk rules moved onto the verbs (byte-identical to the
#: if-chains before: ci/catalog-unchanged.sh, 0 of 3673 records changed)
WALKS_DIGEST = "b4c437e44d32bb2b10776688b04605cdf40c7e4baa96caf94d2675b16b05c10a"


def test_walks_keep_their_ops_whatever_the_verbs_declaration_order():
    """A walk proposes the verbs' rules in the order the verbs are declared,
    and a seed picks among them by position: moving a verb with a walk rule
    in ``conformance/ops/verbs.py`` would give every walk id other ops."""
    assert [str(o) for o in walks.generate(4, "local", "user")] == [
        "construct collector", "iterate collector(batches=1)", "construct buffer",
        "construct evaluator", "kill buffer(how=exit)", "check_alive buffer(expect=False)",
        "teardown collector", "teardown buffer", "teardown evaluator"]
    ops = [[o.to_dict() for o in walks.generate(seed, fixture, owner)]
           for fixture in ("local", "multinode", "external") for owner in ("user", "impl")
           for seed in walks.FULL_SEEDS]
    assert hashlib.sha256(json.dumps(ops, sort_keys=True).encode()).hexdigest() == WALKS_DIGEST


def test_the_exhaust_deadline_follows_the_frame_budget():
    """exhaust waits for a budget's frames, not a fixed 180 s: 30 s plus
    50 ms a CartPole frame (the slowest measured: 15 ms); an endless budget
    or a slower env keeps 180 s."""
    op, adapter = Op("exhaust", "collector"), ReferenceAdapter()
    assert verbs.deadline_of(op, adapter, Spec()) == pytest.approx(55.6)
    assert verbs.deadline_of(op, adapter, None) == pytest.approx(55.6)
    assert verbs.deadline_of(op, adapter, Spec(total_frames=2048)) == pytest.approx(132.4)
    assert verbs.deadline_of(op, adapter, Spec(total_frames=-1)) == 180.0
    # a budget of 0 is a finite one (no batch at all): a collector that never
    # reaches it hangs for 30 s, not 180 s (collector.py:142's mutants)
    assert verbs.deadline_of(op, adapter, Spec(total_frames=0)) == 30.0
    slow = Spec(env_id="conformance.envs:RlcSlowCartPole-v0")
    assert verbs.deadline_of(op, adapter, slow) == 180.0
