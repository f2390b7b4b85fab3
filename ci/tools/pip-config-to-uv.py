#!/usr/bin/env python3
"""Print, as shell `export` lines, the uv settings that give `uv pip install`
the package sources pip is configured with here: `pip config list` (its
config files and PIP_* variables; a variable wins over a file), mapped to
uv's variables. uv reads none of pip's configuration. ci/setup.sh evals it.

  find-links        -> UV_FIND_LINKS (this machine: /opt/wheels, the CPU torch)
  index-url         -> UV_DEFAULT_INDEX
  extra-index-url   -> UV_INDEX, with UV_INDEX_STRATEGY=unsafe-best-match: the
                       best match over every index, as pip chooses (uv's
                       default takes the first index that has the package)
  constraint        -> UV_CONSTRAINT
  cert              -> SSL_CERT_FILE
  default-timeout   -> UV_HTTP_TIMEOUT

Usage: python ci/tools/pip-config-to-uv.py PYTHON (the interpreter whose pip
to ask)."""
import shlex
import subprocess
import sys

MAPPED = {"find-links": "UV_FIND_LINKS", "index-url": "UV_DEFAULT_INDEX",
          "extra-index-url": "UV_INDEX", "constraint": "UV_CONSTRAINT",
          "cert": "SSL_CERT_FILE", "default-timeout": "UV_HTTP_TIMEOUT"}


def pip_config(python: str) -> dict[str, str]:
    """{name: value} of `pip config list`; a PIP_* variable (":env:") wins."""
    out = subprocess.run([python, "-m", "pip", "config", "list"], check=True,
                         capture_output=True, text=True).stdout
    found, from_env = {}, {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if not sep or "." not in key:
            continue
        scope, _, name = key.rpartition(".")
        if scope not in (":env:", "global", "install"):
            continue
        value = value.strip().strip("'\"")
        (from_env if scope == ":env:" else found)[name] = value
    return {**found, **from_env}


def main(python: str) -> None:
    config = pip_config(python)
    for name, var in MAPPED.items():
        if config.get(name):
            print(f"export {var}={shlex.quote(' '.join(config[name].split()))}")
    if config.get("extra-index-url"):
        print("export UV_INDEX_STRATEGY=unsafe-best-match")


if __name__ == "__main__":
    main(sys.argv[1])
