"""A standalone script whose env is the suite's (``conformance.envs:...``)
carries that module and writes it beside itself (``conformance.repro.script_envs``).
No Ray: the script's text is read, and its ``write_envs`` is run alone; the
import a Ray worker makes is stood in for by a process with the script's
directory on its ``sys.path``, as Ray puts it there (``py_driver_sys_path``)."""
import ast
import inspect
import os
import subprocess
import sys

import pytest

from conformance import catalog, envs
from conformance.adapters.registry import load_adapter
from conformance.repro.script import generate

SLOW = "exit/multinode/user/background-running"  # env conformance.envs:RlcSlowCartPole-v0
PLAIN = "order/local/user/ray>collector>buffer>evaluator"  # env CartPole-v1


@pytest.fixture(scope="module")
def slow_script():
    return generate(catalog.find(SLOW), load_adapter("reference"), "reference")


def _main_body(tree):
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    return [ast.unparse(s) for s in main.body]


def test_the_script_carries_the_env_module_and_writes_it_before_ray(slow_script):
    tree = ast.parse(slow_script)
    carried = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                   and n.targets[0].id == "ENVS_SOURCE")
    assert carried == inspect.getsource(envs)  # the module as the suite ran it
    main = _main_body(tree)
    writes = next(k for k, s in enumerate(main) if s.startswith("write_envs("))
    assert writes < next(k for k, s in enumerate(main) if s.startswith("ray.init("))
    doc = ast.get_docstring(tree)
    assert "conformance.envs:RlcSlowCartPole-v0' is the suite's conformance/envs.py" in doc
    assert "PYTHONPATH" not in doc  # no clone of the suite needed


def test_a_script_of_a_plain_env_carries_none():
    text = generate(catalog.find(PLAIN), load_adapter("reference"), "reference")
    assert "ENVS_SOURCE" not in text and "write_envs" not in text


def _write_envs_program(script: str) -> str:
    """The script's ENVS_SOURCE and write_envs, and its main's call of it."""
    tree = ast.parse(script)
    parts = [ast.get_source_segment(script, n) for n in tree.body
             if (isinstance(n, ast.Assign) and n.targets[0].id == "ENVS_SOURCE")
             or (isinstance(n, ast.FunctionDef) and n.name == "write_envs")]
    call = next(s for s in _main_body(tree) if s.startswith("write_envs("))
    return "\n\n".join(["import os", "import sys", *parts, call])


def _python(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not the project's
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


MAKE = ("import sys; sys.path.insert(0, sys.argv[1]); import gymnasium as gym; "
        "env = gym.make('conformance.envs:RlcSlowCartPole-v0'); import conformance.envs as m; "
        "print(type(env.unwrapped).__name__, m.__file__)")


def test_the_written_env_is_made_without_the_project(slow_script, tmp_path):
    """Run from elsewhere, the script writes the module beside itself; a
    process with that directory on its sys.path (a worker of the script's
    job) makes the env from it, not from this clone."""
    here, elsewhere = tmp_path / "script", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    (here / "repro.py").write_text(_write_envs_program(slow_script))
    done = _python(str(here / "repro.py"), cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (here / "conformance" / "envs.py").read_text() == inspect.getsource(envs)
    made = _python("-c", MAKE, str(here), cwd="/")
    assert made.returncode == 0, made.stderr
    assert made.stdout.split() == ["SlowCartPole", str(here / "conformance" / "envs.py")]
    again = _python(str(here / "repro.py"), cwd=here)  # a rerun: the same files, no error
    assert again.returncode == 0, again.stderr


def test_a_different_env_module_in_the_way_is_an_error(slow_script, tmp_path):
    (tmp_path / "conformance").mkdir()
    (tmp_path / "conformance" / "envs.py").write_text("# another module\n")
    (tmp_path / "repro.py").write_text(_write_envs_program(slow_script))
    done = _python(str(tmp_path / "repro.py"), cwd=tmp_path)
    assert done.returncode != 0 and "is not the env this script carries" in done.stderr
    assert (tmp_path / "conformance" / "envs.py").read_text() == "# another module\n"
