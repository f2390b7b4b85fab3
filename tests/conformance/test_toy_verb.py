"""Adding a verb touches the verb table only (``toy_verb.py``): a scenario
that uses it (a temporary catalog of one) runs end to end, is skipped by an
adapter without the feature it declares, and has a standalone script."""
import os
import subprocess
import sys

from conformance.ops import verbs
from conformance.catalog.build import requirements
from conformance.run.execute import failure_message, run_scenario
from conformance.adapters.registry import load_adapter
from conformance.ops.scenario import Op, Scenario
from conformance.repro.script import generate
from fixtures.rayenv import REPO_ROOT

IMPL = "tests.conformance.toy_verb:ToyAdapter"


def toy_scenario():
    from tests.conformance import toy_verb  # noqa: F401 - declares the verb

    toy_ops = (Op("construct", "buffer"), Op("extend", "buffer", {"frames": 8}),
               Op("toy_len_twice", "buffer"), Op("teardown", "buffer"))
    return Scenario("toy", "local", "user", "len-twice", toy_ops,
                    requires=requirements(toy_ops))


def test_a_toy_verb_declared_once_runs_end_to_end_and_in_its_script(session, tmp_path):
    scenario = toy_scenario()
    assert scenario.requires == ("toy_reads",)  # the feature it declared
    assert load_adapter("reference").unsupported(scenario.requires) == ["toy_reads"]
    adapter = load_adapter(IMPL)
    assert verbs.deadline_of(scenario.ops[2], adapter, None) == 30.0

    entry = run_scenario(scenario, IMPL, adapter, session, str(tmp_path / "run"))
    assert entry["verdict"] == "pass", failure_message(entry)
    toy_line = [line for line in entry["evidence"]["history"] if "toy_len_twice" in line]
    assert len(toy_line) == 1 and " ok " in toy_line[0], entry["evidence"]["history"]

    path = tmp_path / "toy.py"
    path.write_text(generate(scenario, adapter, impl_name=IMPL))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "[2] toy_len_twice buffer: ok -> toy: 8 8" in done.stdout, done.stdout
