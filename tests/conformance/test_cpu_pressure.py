"""conformance.run.cpu_pressure: the CPU pressure kept with each scenario's evidence, and
the failure message's warning when a bound was exceeded under heavy
pressure. A fake PSI file stands for /proc/pressure/cpu; nothing starts Ray."""
import time

from conformance.run.execute import failure_message
from conformance.run.cpu_pressure import HEAVY, CpuPressure, cpu_stall_seconds, describe


def psi(path, total_us):
    path.write_text(f"some avg10=1.00 avg60=2.00 avg300=3.00 total={total_us}\n"
                    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


def test_share_is_the_stall_over_the_wall_time(tmp_path):
    path = tmp_path / "cpu"
    psi(path, 5_000_000)
    assert cpu_stall_seconds(str(path)) == 5.0
    pressure = CpuPressure(str(path))
    pressure.t0 = time.monotonic() - 10.0  # ten seconds ago
    psi(path, 12_000_000)  # 7 s of stall in those 10 s
    assert 0.69 <= pressure.share() <= 0.70


def test_no_psi_no_figure(tmp_path):
    assert cpu_stall_seconds(str(tmp_path / "absent")) is None
    assert CpuPressure(str(tmp_path / "absent")).share() is None
    assert describe({"evidence": {"cpu_pressure": None}, "oracles": ["teardown_within_bound"]}) == []


def entry(oracles, pressure):
    return {"id": "order/local/user/collector>ray", "verdict": "fail", "ops": "...",
            "oracles": oracles, "repro": "python -m conformance repro ID",
            "evidence": {"violations": {o: ["..."] for o in oracles}, "history": [],
                         "cpu_pressure": pressure}}


def test_a_timing_failure_under_heavy_pressure_is_flagged_and_nothing_else():
    flagged = failure_message(entry(["teardown_within_bound", "no_ray_restart"], HEAVY))
    assert "machine: CPU pressure 80% during this scenario" in flagged
    assert "teardown_within_bound may have failed on a bound the oversubscribed machine " \
           "exceeded" in flagged
    calm = failure_message(entry(["teardown_within_bound"], 0.65))
    assert "machine: CPU pressure 65%" in calm and "may have failed" not in calm
    untimed = failure_message(entry(["no_ray_restart"], 0.95))
    assert "machine: CPU pressure 95%" in untimed and "may have failed" not in untimed
