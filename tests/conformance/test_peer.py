"""The peer standby: a fork of the driver that runs a second driver on demand."""
import json
import os

import pytest

from conformance.run.peer import PeerStandby


def toy_main(request_path):
    with open(request_path) as f:
        request = json.load(f)
    print("peer says", os.environ.get("RLC_TOY"), flush=True)
    if request.get("sleep"):
        import time

        time.sleep(request["sleep"])
    return request["code"]


def request_file(tmp_path, **request):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    return str(path)


def test_the_standby_runs_main_with_env_and_output_and_returns_its_code(tmp_path):
    standby = PeerStandby(toy_main)
    code = standby.run(request_file(tmp_path, code=3), {"RLC_TOY": "hello"},
                       str(tmp_path / "out"), str(tmp_path / "err"), timeout=30)
    assert code == 3
    assert (tmp_path / "out").read_text() == "peer says hello\n"
    assert "RLC_TOY" not in os.environ  # set in the peer only


def test_a_peer_past_its_deadline_is_killed(tmp_path):
    standby = PeerStandby(toy_main)
    with pytest.raises(TimeoutError):
        standby.run(request_file(tmp_path, code=0, sleep=60), {}, str(tmp_path / "out"),
                    str(tmp_path / "err"), timeout=1)
    with pytest.raises(ChildProcessError):
        os.waitpid(standby.pid, os.WNOHANG)  # killed and reaped


def test_an_unused_standby_exits_when_released():
    standby = PeerStandby(toy_main)
    standby.close()
    _, status = os.waitpid(standby.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
