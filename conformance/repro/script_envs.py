"""The suite's envs in a standalone script (``conformance.repro.script``).

An env id ``conformance.envs:RlcSlowCartPole-v0`` names a module of this
project, which gymnasium imports wherever the env is made: in the script's
process and in Ray's workers, where a script run without the project raised
ModuleNotFoundError. A script whose scenario uses one carries the module's
source (``ENVS_SOURCE``) and, first thing, writes it beside itself as
``conformance/envs.py`` (``write_envs``). The script's process imports it
from there (its directory is first on ``sys.path``), and so do the job's
workers: Ray puts the driver's script directory and working directory on
their ``sys.path`` (``py_driver_sys_path``, Ray 2.60's ``worker.py``), the
workers of a local ``ray.init`` and of a cluster's nodes alike, on this
machine (a cluster of several machines needs the file on each).
"""
from __future__ import annotations

import inspect
import os

from conformance import envs
from conformance.adapters.snippets import source_of

ENVS_SOURCE = inspect.getsource(envs)
#: the script's ``main`` calls it first: the directory Ray puts on its workers' sys.path
CALL = "write_envs(os.path.dirname(os.path.realpath(sys.argv[0])))  # the suite's env"


def uses_envs(env_id) -> bool:
    """Whether ``env_id`` (one id, or one per env) names one of the suite's envs."""
    ids = env_id if isinstance(env_id, (tuple, list)) else [env_id]
    return any(str(one).startswith(f"{envs.__name__}:") for one in ids)


def write_envs(folder):
    """``ENVS_SOURCE`` as ``conformance/envs.py`` in ``folder``, the script's
    directory, where gymnasium imports it for an env id ``conformance.envs:``
    here and in Ray's workers (Ray puts the driver's directory on their
    ``sys.path``). A file that is there already stays; a different
    ``envs.py`` there is an error (not the env this script carries)."""
    import importlib

    package = os.path.join(folder, "conformance")
    os.makedirs(package, exist_ok=True)
    for name, text in (("__init__.py", ""), ("envs.py", ENVS_SOURCE)):
        path = os.path.join(package, name)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(text)
        elif name == "envs.py":
            with open(path) as f:
                if f.read() != text:
                    raise RuntimeError(f"{path} is not the env this script carries: run "
                                       "the script from another directory")
    importlib.invalidate_caches()  # a finder that listed the folder before sees it now


def script_lines() -> list[str]:
    """The script's lines that carry the envs: ``ENVS_SOURCE`` as it is, and
    ``write_envs`` (its ``main`` calls it first: ``CALL``)."""
    if "'''" in ENVS_SOURCE or ENVS_SOURCE.endswith("\\"):
        raise ValueError(f"{envs.__file__} cannot be quoted as r'''...''' in a script")
    return ["# The suite's env module, conformance/envs.py, which the scenario's env id names",
            "# (gymnasium imports it where the env is made): written beside this script",
            "# when it starts (write_envs).",
            f"ENVS_SOURCE = r'''{ENVS_SOURCE}'''", "", "", *source_of(write_envs)]
