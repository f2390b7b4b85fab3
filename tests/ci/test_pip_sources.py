"""conformance/releases/pip_sources.py: the package sources pip is configured
with, given to uv (ci/setup.sh and the release venvs install with uv, which
reads none of pip's configuration). pip is asked for real, with a config
file of the test's own (PIP_CONFIG_FILE) and PIP_* variables."""
import os
import subprocess
import sys

import pytest

from conformance.releases import pip_sources

SCRIPT = pip_sources.__file__


@pytest.fixture
def pip_env(tmp_path, monkeypatch):
    """The test's pip configuration file, read last (pip still reads /etc/pip.conf);
    the machine's PIP_* variables out."""
    for var in list(os.environ):
        if var.startswith("PIP_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path / "pip.conf"


def test_each_source_maps_to_uv_and_a_variable_wins_over_the_file(pip_env, monkeypatch):
    pip_env.write_text("[global]\nfind-links =\n    /opt/wheels\n    /opt/more\n"
                       "extra-index-url = file:///a/simple file:///b/simple\n"
                       "default-timeout = 15.5\nconstraint = /etc/c.txt\n")
    env = pip_sources.uv_environment(sys.executable)
    expected = {"UV_FIND_LINKS": "/opt/wheels,/opt/more",
                "UV_INDEX": "file:///a/simple file:///b/simple",
                "UV_INDEX_STRATEGY": "unsafe-best-match",
                "UV_CONSTRAINT": "/etc/c.txt", "UV_HTTP_TIMEOUT": "16"}
    # pip reads the machine's /etc/pip.conf whatever PIP_CONFIG_FILE says (its cert)
    assert {k: env.get(k) for k in expected} == expected, env
    monkeypatch.setenv("PIP_FIND_LINKS", "/elsewhere")
    assert pip_sources.uv_environment(sys.executable)["UV_FIND_LINKS"] == "/elsewhere"


def test_an_unmapped_source_setting_means_pip(pip_env):
    pip_env.write_text("[global]\nno-index = true\nfind-links = /opt/wheels\n")
    with pytest.raises(pip_sources.Unmapped, match="no-index"):
        pip_sources.uv_environment(sys.executable)
    done = subprocess.run([sys.executable, SCRIPT, sys.executable], capture_output=True,
                          text=True)
    assert (done.returncode, done.stdout) == (3, ""), done
    assert "no-index, which uv would not be given" in done.stderr


def test_the_script_prints_exports_a_shell_reads_back(pip_env):
    pip_env.write_text("[global]\nfind-links = /opt/wheels\n")
    done = subprocess.run(["bash", "-c", f'eval "$("{sys.executable}" "{SCRIPT}" '
                           f'"{sys.executable}")"; echo "$UV_FIND_LINKS|${{UV_INDEX-unset}}"'],
                          capture_output=True, text=True, check=True)
    assert done.stdout == "/opt/wheels|unset\n", done
