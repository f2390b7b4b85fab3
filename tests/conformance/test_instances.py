"""Several instances of a component (targets such as ``collector.2``): the
names, the verbs on an adapter double (no Ray), the catalog's instances and
sweep families, the standalone script and shrink."""
import itertools
from types import SimpleNamespace

import pytest

from conformance import catalog
from conformance.repro import script
from conformance.ops import targets, verbs
from conformance.adapter import Spec
from conformance.adapters.registry import load_adapter
from conformance.ops.scenario import Op, Scenario
from conformance.repro.shrink import shrink


# -- names ---------------------------------------------------------------------------

def test_a_target_is_a_kind_with_an_optional_instance_number_from_2():
    assert targets.parse("collector") == ("collector", 1)
    assert targets.parse("buffer.2") == ("buffer", 2)
    assert targets.parse("evaluator.12") == ("evaluator", 12)
    for bad in ("robot", "collector.1", "collector.0", "collector.x", "collector_2", "buffer.02"):
        with pytest.raises(ValueError):
            targets.parse(bad)
    assert targets.variable("collector.2") == "collector_2"
    assert targets.instance("buffer", 1) == "buffer" and targets.instance("buffer", 3) == "buffer.3"


def test_an_op_names_a_valid_target_and_writes_into_a_buffer():
    with pytest.raises(ValueError, match="unknown target"):
        Op("teardown", "collector.1")
    with pytest.raises(ValueError, match="not a buffer target"):
        Op("construct", "collector", {"buffer": "collector.2"})
    assert targets.writes_into(Op("construct", "collector.2", {"buffer": True})) == "buffer"
    assert targets.writes_into(Op("construct", "collector", {"buffer": "buffer.2"})) == "buffer.2"
    assert targets.writes_into(Op("construct", "collector")) is None


def test_a_second_name_is_the_scenario_s_with_a_suffix():
    assert targets.actor_name("rlc-eval-1", True) == "rlc-eval-1"
    assert targets.actor_name("rlc-eval-1", "2") == "rlc-eval-1-2"


def test_instances_are_needed_only_when_two_of_one_kind_are_open_at_once():
    at_once = [Op("construct", "buffer"), Op("construct", "collector", {"buffer": True}),
               Op("construct", "collector.2", {"buffer": True})]
    assert "instances" in catalog.build.requirements(at_once)
    one_after_another = [Op("construct", "collector"), Op("teardown", "collector"),
                         Op("construct", "collector.2"), Op("teardown", "collector.2")]
    assert "instances" not in catalog.build.requirements(one_after_another)
    exhausted = [Op("construct", "collector"), Op("exhaust", "collector"),
                 Op("construct", "collector.2")]
    assert "instances" not in catalog.build.requirements(exhausted)
    # a second eval worker that must fail still asks for one at once
    taken = [Op("construct", "evaluator", {"named": True}),
             Op("construct", "evaluator.2", {"named": True, "fail": "name_taken"})]
    assert "instances" in catalog.build.requirements(taken)
    # an op on any instance of the eval worker needs the eval worker
    assert "evaluator" in verbs.needs_of(Op("submit", "evaluator.2"))


def test_a_scenario_lists_its_instances_and_its_kinds():
    s = catalog.find("instances/local/user/2-buffers>buffer>collector>buffer.2>collector.2")
    assert s.components == ("buffer", "buffer.2", "collector", "collector.2")
    assert s.kinds == ("buffer", "collector")


# -- the verbs, on an adapter double -----------------------------------------------------

class Recorder:
    """An adapter double: records what each call got; no Ray."""

    features = frozenset()

    def __init__(self):
        self.calls, self.lengths = [], {}

    def make_buffer(self, spec):
        return f"B{len(self.calls)}", self.calls.append(("make_buffer", spec.resources))

    def make_collector(self, spec, buffer=None):
        self.calls.append(("make_collector", buffer, spec.total_frames))
        return f"C{len(self.calls)}"

    def make_evaluator(self, spec):
        self.calls.append(("make_evaluator", spec.actor_name))
        return f"E{len(self.calls)}"

    def teardown(self, kind, obj, shutdown_ray=False):
        self.calls.append(("teardown", kind, obj))

    def is_alive(self, kind, obj):
        self.calls.append(("is_alive", kind, obj))
        return True

    def buffer_len(self, obj):
        self.lengths[obj] = self.lengths.get(obj, 0) + 8  # it grows on every reading
        return self.lengths[obj]


def context(*ops):
    return SimpleNamespace(adapter=Recorder(), spec=Spec(), objects={}, connected=set(),
                           actor_name="rlc-eval-7", note_ray_started=lambda: None,
                           scenario=Scenario("instances", "local", "user", "t", tuple(ops)))


def test_verbs_build_each_instance_and_pass_the_adapter_its_kind():
    ops = [Op("construct", "buffer"), Op("construct", "buffer.2", {"place": "node_b"}),
           Op("construct", "collector.2", {"buffer": "buffer.2", "total_frames": -1}),
           Op("construct", "evaluator.2", {"named": "2"}),
           Op("teardown", "collector.2"), Op("check_alive", "evaluator.2", {"within": 0})]
    ctx = context(*ops)
    for o in ops:
        verbs.VERBS[o.verb].run(ctx, o)
    made = ctx.adapter.calls
    assert made[1] == ("make_buffer", {"buffer": {"resources": {"node_b": 1}}})  # keyed by kind
    assert made[2] == ("make_collector", ctx.objects["buffer.2"], -1)
    assert made[3] == ("make_evaluator", "rlc-eval-7-2")
    assert made[4] == ("teardown", "collector", ctx.objects["collector.2"])
    assert made[5] == ("is_alive", "evaluator", ctx.objects["evaluator.2"])
    assert set(ctx.objects) == {"buffer", "buffer.2", "collector.2", "evaluator.2"}


def test_check_writes_reads_the_buffer_its_collector_writes_into():
    ops = [Op("construct", "buffer"), Op("construct", "buffer.2"),
           Op("construct", "collector.2", {"buffer": "buffer.2"})]
    ctx = context(*ops, Op("check_writes", "collector.2", {"more": 16, "timeout": 5}))
    for o in ops:
        verbs.VERBS[o.verb].run(ctx, o)
    out = verbs.check_writes(ctx, Op("check_writes", "collector.2", {"more": 16, "timeout": 5}))
    assert out["buffer"] == "buffer.2" and out["frames"] - out["from"] >= 16
    assert "buffer" not in ctx.adapter.lengths  # the other buffer was never read
    with pytest.raises(verbs.HarnessError, match="writes into no buffer"):
        verbs.check_writes(ctx, Op("check_writes", "collector"))


# -- the catalog ----------------------------------------------------------------------

NEW = ("instances", "sweep")


def test_the_new_families_leave_every_other_scenario_single_instance():
    for s in catalog.scenarios(("local", "multinode", "external"), "full"):
        if s.family in NEW:
            continue
        assert all(t in targets.KINDS for t in s.components), s.id
        assert "instances" not in s.requires, s.id


def test_instances_and_sweep_exist_for_what_an_implementation_has():
    ids = lambda comps: {s.variant for s in catalog.scenarios(  # noqa: E731
        ("local",), "full", families=NEW, components=comps) if s.owner == "user"}
    everything = ids(catalog.ALL)
    assert "2-collectors>collector>collector.2>buffer>ray" in everything
    assert len([v for v in everything if v.startswith("2-collectors>")]) == 24
    assert {"evaluator-same-name", "2-named-evaluators>stop-evaluator.2", "all", "keep-buffer",
            "named"} <= everything
    no_buffer = ids(("collector", "evaluator"))  # RLlib's
    assert not any("buffers" in v or "collectors" in v or "keep-buffer" in v
                   for v in no_buffer)
    assert "all~no-buffer" in no_buffer and "evaluator-same-name" in no_buffer
    assert ids(("collector",)) == {"all~no-buffer-evaluator"}
    impl = {s.variant for s in catalog.scenarios(("local",), "full", families=["sweep"])
            if s.owner == "impl"}
    assert "impl-then-user" in impl


def test_every_new_scenario_is_found_by_its_id():
    for comps in (catalog.ALL, ("collector", "evaluator"), ("buffer", "collector")):
        for s in catalog.scenarios(("local", "multinode"), "full", families=NEW,
                                   components=comps):
            assert catalog.find(s.id) == s


def test_sweep_on_the_impl_owner_ends_generation_one_with_shutdown_ray():
    s = catalog.find("sweep/local/impl/all")
    first = next(i for i, o in enumerate(s.ops) if o.verb == "check_clean")
    assert s.ops[first - 1] == Op("teardown", "collector", {"shutdown_ray": True})
    assert {o.target for o in s.ops[first:] if o.verb == "construct"} == {
        "buffer.2", "collector.2", "evaluator.2"}
    assert catalog.find("sweep/local/user/all").ops[first - 1] == Op("teardown", "collector")


# -- the standalone script and shrink ---------------------------------------------------

def test_a_script_binds_each_op_to_its_instance():
    s = catalog.find("instances/local/user/2-buffers-started>close-buffer")
    text = script.generate(s, load_adapter("reference"), "reference")
    compile(text, s.id, "exec")
    assert "buffer_2 = collector_2 = None  # the further instances" in text
    build_second = text[text.index("def op_3():"):text.index("def op_4():")]
    assert "buffer = buffer_2  # this op's buffer.2" in build_second
    assert "global collector_2" in build_second and "collector_2 = collector" in build_second
    check = text[text.index("def op_12():"):text.index("def op_13():")]
    assert "# check_writes collector.2" in check and "buffer = buffer_2" in check
    assert "(11, 'check_data buffer.2', op_11, " in text and "'buffer_2', " in text


def test_a_script_names_a_second_eval_worker_apart():
    s = catalog.find("instances/local/user/2-named-evaluators>stop-evaluator")
    text = script.generate(s, load_adapter("reference"), "reference")
    compile(text, s.id, "exec")
    assert "name=(ACTOR_NAME + '-2')," in text
    assert "name = (ACTOR_NAME + '-2')" in text  # its check_name


def test_shrink_drops_a_whole_instance_first():
    ops = [Op("construct", "buffer"), Op("construct", "collector", {"buffer": True}),
           Op("construct", "collector.2", {"buffer": True}), Op("iterate", "collector.2"),
           Op("teardown", "collector"), Op("check_data", "buffer"),
           Op("teardown", "collector.2"), Op("teardown", "buffer")]
    s = Scenario("instances", "local", "user", "t", tuple(ops))
    tried = []

    def fails(c):  # the "bug": collector's teardown before a reading of the buffer
        tried.append(c)
        names = [str(o) for o in c.ops]
        return "teardown collector" in names and "check_data buffer" in names and \
            names.index("teardown collector") < names.index("check_data buffer")

    small = shrink(s, fails)
    assert not any(o.target == "collector.2" for o in tried[0].ops)  # the first try
    assert [str(o) for o in small.ops] == ["teardown collector", "check_data buffer"]


def test_orders_of_two_collectors_are_every_permutation():
    found = {s.variant for s in catalog.scenarios(("local",), "full", families=["instances"])
             if s.owner == "impl" and s.variant.startswith("2-collectors>")}
    want = {"2-collectors>" + ">".join(p)
            for p in itertools.permutations(("collector", "collector.2", "buffer", "ray"))}
    assert found == want
