"""The package sources pip is configured with here, for uv: uv reads none of
pip's configuration, and on this machine pip's ``find-links`` holds the CPU
torch wheel (without it uv would take PyPI's CUDA build).

``uv_environment(python)`` maps `python -m pip config list` (pip's config
files and its PIP_* variables; a variable wins over a file) to uv's
variables:

  find-links        -> UV_FIND_LINKS (comma-separated)
  index-url         -> UV_DEFAULT_INDEX
  extra-index-url   -> UV_INDEX, with UV_INDEX_STRATEGY=unsafe-best-match: the
                       best match over every index, as pip chooses (uv's
                       default takes the first index that has the package)
  constraint        -> UV_CONSTRAINT
  cert              -> SSL_CERT_FILE
  default-timeout   -> UV_HTTP_TIMEOUT (whole seconds)

A setting that changes where packages come from and has no mapping here
(``no-index``, ``trusted-host``, ``proxy``, ...) raises :class:`Unmapped`:
install with pip there. Standard library only: ``ci/setup.sh`` runs this
file before anything is installed (``python pip_sources.py PYTHON`` prints
``export`` lines; exit 3 on an unmapped setting)."""
from __future__ import annotations

import ast
import shlex
import subprocess
import sys

#: pip setting -> (uv variable, separator of its values)
MAPPED = {"find-links": ("UV_FIND_LINKS", ","), "index-url": ("UV_DEFAULT_INDEX", " "),
          "extra-index-url": ("UV_INDEX", " "), "constraint": ("UV_CONSTRAINT", " "),
          "cert": ("SSL_CERT_FILE", " ")}
#: pip settings that decide where packages come from, with no mapping here
UNMAPPED = ("no-index", "trusted-host", "proxy", "client-cert", "only-binary", "no-binary",
            "index", "pre", "prefer-binary")


class Unmapped(ValueError):
    """pip is configured with a source setting uv would not be given."""


def pip_config(python: str) -> dict[str, str]:
    """``{name: value}`` of `pip config list`; a PIP_* variable (":env:") wins."""
    out = subprocess.run([python, "-m", "pip", "config", "list"], check=True,
                         capture_output=True, text=True).stdout
    found, from_env = {}, {}
    for line in out.splitlines():
        key, sep, raw = line.partition("=")
        scope, dot, name = key.rpartition(".")
        if not sep or not dot or scope not in (":env:", "global", "install"):
            continue
        try:
            value = ast.literal_eval(raw.strip())  # pip prints each value's repr
        except (ValueError, SyntaxError):
            value = raw.strip().strip("'\"")
        (from_env if scope == ":env:" else found)[name] = str(value)
    return {**found, **from_env}


def uv_environment(python: str) -> dict[str, str]:
    """uv's variables for the sources ``python``'s pip is configured with."""
    config = pip_config(python)
    unmapped = sorted(set(config) & set(UNMAPPED))
    if unmapped:
        raise Unmapped(f"pip is configured with {', '.join(unmapped)}, which uv would not "
                       "be given (conformance/releases/pip_sources.py)")
    env = {var: sep.join(config[name].split()) for name, (var, sep) in MAPPED.items()
           if config.get(name, "").strip()}
    if config.get("default-timeout"):
        env["UV_HTTP_TIMEOUT"] = str(max(1, round(float(config["default-timeout"]))))
    if "UV_INDEX" in env:
        env["UV_INDEX_STRATEGY"] = "unsafe-best-match"
    return env


def main(argv: list[str]) -> int:
    try:
        env = uv_environment(argv[0])
    except Unmapped as exc:
        print(f"pip_sources: {exc}", file=sys.stderr)
        return 3
    for var, value in env.items():
        print(f"export {var}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
