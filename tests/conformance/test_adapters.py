"""Built-in adapters: what pytest's own processes pay for loading them."""
import subprocess
import sys

from fixtures.rayenv import REPO_ROOT

LOAD = """
import sys
from conformance.adapters.registry import load_adapter
adapters = [load_adapter("reference"), load_adapter("regression:exit-hangs-on-thread")]
print("torch" in sys.modules, "impl.collector" in sys.modules)
classes = [a.classes["collector"] for a in adapters]
print([c.__name__ for c in classes], classes[1] is not classes[0] and issubclass(classes[1], classes[0]))
"""


def test_loading_an_adapter_imports_no_torch_until_its_classes_are_used():
    """The controller and every xdist worker load the adapter; only drivers
    (forks of the zygote, torch preloaded) build components."""
    done = subprocess.run([sys.executable, "-c", LOAD], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False False", "['RayCollector', 'RayCollector'] True"]
