"""Cached virtual environments, one per (implementation package version, Ray
version): what ``bisect`` and the release matrix run the suite in.

An environment holds the suite's own test dependencies, torch as the main
lock pins it, the package under test at one version and Ray at one version;
everything else is left to the installer's resolver (a torchrl release
accepts one tensordict minor, for instance), and what it chose is recorded
in the environment's ``freeze.txt``. A finished environment has a stamp
(``rlc-env.json``) and is reused as is; a half-built one (no stamp) is
built again from scratch.

The installer is uv where it is installed (``uv venv`` / ``uv pip``), else
pip. torch comes from the lock's exact pin; uv is given the package sources
pip is configured with (``conformance.releases.pip_sources``: on a machine
with the CPU wheel on disk, pip's ``find-links``), since uv does not read
pip's configuration and would otherwise take PyPI's CUDA build; where pip
has a source setting that has no uv equivalent there, pip installs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance.releases.pip_sources import Unmapped, uv_environment

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the suite's own dependencies besides torch, Ray and the package under
#: test (gymnasium unpinned: RLlib pins its own)
SUITE_REQUIREMENTS = ("pytest", "pytest-xdist", "pytest-timeout", "psutil", "py-spy",
                      "gymnasium", "tensordict")


def cache_root() -> Path:
    return Path(os.environ.get("RLC_VENV_CACHE") or Path.home() / ".cache" / "rlc-venvs")


@dataclass(frozen=True)
class EnvSpec:
    """What one environment holds: ``package`` (a pip requirement name:
    ``torchrl``, or ``ray[rllib]`` whose version is Ray's) at ``version``,
    and Ray at ``ray``."""

    package: str
    version: str
    ray: str

    def __post_init__(self):
        if self.package.split("[")[0] == "ray" and self.version != self.ray:
            raise ValueError(f"{self.package} comes with Ray: its version is Ray's ({self.ray})")

    @property
    def name(self) -> str:
        return f"{self.package.replace('[', '-').rstrip(']')}-{self.version}_ray-{self.ray}"

    def requirements(self) -> list[str]:
        pins = [f"{self.package}=={self.version}"]
        if self.package.split("[")[0] != "ray":
            pins.append(f"ray=={self.ray}")
        return pins + list(SUITE_REQUIREMENTS)


def torch_requirement() -> str:
    """torch's exact pin from the main lock (a CPU build where the machine has one)."""
    with open(REPO_ROOT / "ci" / "requirements.lock") as f:
        for line in f:
            if line.startswith("torch=="):
                return line.strip()
    return "torch"


def installer() -> str:
    """"uv" when it is on PATH or beside this interpreter and pip's sources
    map to uv's, else "pip"."""
    if not _uv():
        return "pip"
    try:
        uv_environment(sys.executable)
    except Unmapped:
        return "pip"
    return "uv"


def _uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def _commands(path: Path, spec: EnvSpec, tool: str) -> list[list[str]]:
    python = str(path / "bin" / "python")
    if tool == "uv":
        uv = _uv()
        # --compile-bytecode: pip compiles on install, uv does not; where
        # PYTHONDONTWRITEBYTECODE is set (this machine's shell has it) no
        # process writes a .pyc either, and every Ray worker compiled torch
        # anew (2026-11-26: no .pyc under torch/ after 3 min of a column).
        # On the last install only: it compiles the whole site-packages.
        install = [uv, "pip", "install", "-q", "--python", python]
        return [[uv, "venv", "-q", "--python", sys.executable, str(path)],
                [*install, torch_requirement()],
                [*install, "--compile-bytecode", *spec.requirements()]]
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    return [[sys.executable, "-m", "venv", str(path)],
            [*pip, torch_requirement()],
            [*pip, *spec.requirements()]]


def ensure(spec: EnvSpec, tool: str | None = None, log=print) -> Path:
    """The environment's python, built first if it is not cached."""
    path = cache_root() / spec.name
    stamp = path / "rlc-env.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("bytecode"):
        return path / "bin" / "python"
    # a stamp without "bytecode": built by uv before --compile-bytecode (a20a2d2)
    if path.exists():
        shutil.rmtree(path)  # half-built: start again
    tool = tool or installer()
    path.parent.mkdir(parents=True, exist_ok=True)
    log(f"building {path} with {tool}: {' '.join(spec.requirements())}")
    t0 = time.monotonic()
    env = {**os.environ, **uv_environment(sys.executable)} if tool == "uv" else None
    for cmd in _commands(path, spec, tool):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (exit {done.returncode}):\n"
                               f"{done.stderr[-3000:]}")
    freeze = subprocess.run([str(path / "bin" / "python"), "-m", "pip", "freeze"]
                            if tool == "pip" else
                            [_uv(), "pip", "freeze", "--python", str(path / "bin" / "python")],
                            capture_output=True, text=True, check=True).stdout
    (path / "freeze.txt").write_text(freeze)
    seconds = round(time.monotonic() - t0, 1)
    stamp.write_text(json.dumps({**asdict(spec), "installer": tool, "seconds": seconds,
                                 "bytecode": True}))
    log(f"built {path} in {seconds} s")
    return path / "bin" / "python"


def spec_for(impl: str, version: str, ray: str) -> EnvSpec:
    """The environment of adapter ``impl``'s package at ``version`` with Ray
    ``ray`` (for ``rllib`` the version is Ray's); ValueError for an adapter
    that names no package."""
    from conformance.adapters.registry import adapter_class

    package = getattr(adapter_class(impl), "package", None)
    if not package:
        raise ValueError(f"adapter {impl!r} names no package")
    return EnvSpec(package, version, ray)


def main(args) -> int:
    """``python -m conformance venv IMPL VERSION RAY``: build the release's
    environment if it is not cached; print its python."""
    from conformance.adapters.registry import UsageError

    try:
        spec = spec_for(args.impl, args.version, args.ray)
        python = ensure(spec, log=lambda line: print(line, file=sys.stderr))
    except (ValueError, UsageError, RuntimeError) as exc:
        print(f"venv: {exc}", file=sys.stderr)
        return 2
    print(python)
    return 0

