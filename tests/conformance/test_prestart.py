"""The next scenario's driver starts while the current one exits, and is adopted."""
from conformance import catalog
from conformance.run.execute import EarlyStart, failure_message, run_scenario
from conformance.ops.history import History, read_history
from conformance.adapters.registry import load_adapter
from fixtures import procs

FIRST = "double_close/local/user/buffer-twice"
NEXT = "use_after_close/local/user/buffer"


def test_next_driver_starts_during_the_exit_and_is_adopted(session, tmp_path):
    adapter = load_adapter("reference")
    first, upcoming = catalog.find(FIRST), catalog.find(NEXT)
    started = {}

    def then():
        first_pid = History(read_history(str(tmp_path / "first" / "history.jsonl"))).setup["pid"]
        EarlyStart.of(session).start(upcoming, "reference", adapter, str(tmp_path / "next"))
        started["first_alive"] = procs.pid_alive(first_pid)

    entry = run_scenario(first, "reference", adapter, session, str(tmp_path / "first"),
                         then=then)
    assert entry["verdict"] == "pass", failure_message(entry)
    assert started["first_alive"], "the next driver started only after the first one had exited"
    adopted = run_scenario(upcoming, "reference", adapter, session, str(tmp_path / "other"))
    assert adopted["verdict"] == "pass", failure_message(adopted)
    assert NEXT not in EarlyStart.of(session).started
    assert not (tmp_path / "other" / "history.jsonl").exists()  # it ran in the prestarted workdir
    assert (tmp_path / "next" / "history.jsonl").exists()


def test_a_driver_prestarted_for_another_test_is_stopped_before_the_next_scenario(session, tmp_path):
    """--dist worksteal: the test this process prestarted went to another worker."""
    adapter = load_adapter("reference")
    EarlyStart.of(session).start(catalog.find(NEXT), "reference", adapter, str(tmp_path / "stolen"))
    stolen = EarlyStart.of(session).started[NEXT]
    assert procs.pid_alive(stolen.pid)
    entry = run_scenario(catalog.find(FIRST), "reference", adapter, session, str(tmp_path / "first"))
    assert entry["verdict"] == "pass", failure_message(entry)
    assert EarlyStart.of(session).started == {}
    assert not procs.pid_alive(stolen.pid)
    assert procs.find_marked(stolen.marker) == []


def test_a_prestarted_driver_nobody_adopts_is_killed_with_the_session(tmp_path):
    import os

    from conformance.run.execute import preload_modules
    from fixtures.rayenv import RAY_ENV
    from fixtures.session import SessionResources

    os.environ.update(RAY_ENV)
    adapter = load_adapter("reference")
    own = SessionResources(preload=preload_modules(adapter))
    try:
        EarlyStart.of(own).start(catalog.find(NEXT), "reference", adapter, str(tmp_path))
        run = EarlyStart.of(own).started[NEXT]
        assert procs.pid_alive(run.pid)
    finally:
        own.close()
    assert procs.find_marked(own.marker) == []
