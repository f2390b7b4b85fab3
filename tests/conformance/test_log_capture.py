"""What the implementation logs reaches the history (``conformance.ops.log_capture``),
with the op it was logged in, and the user still sees what Python would print."""

import contextlib
import logging

import pytest

from conformance.ops.log_capture import LogCapture


@pytest.fixture
def captured():
    written, where = [], {"at": (3, 2)}
    capture = LogCapture(("impl",), written.append, lambda: where["at"]).install()
    yield written, where
    capture.remove()


@contextlib.contextmanager
def alone_on_the_root():
    """The root logger with the capture only, as in a driver: pytest's log
    capture handlers (added for the test's call) set aside meanwhile."""
    root = logging.getLogger()
    others = [h for h in root.handlers if not isinstance(h, LogCapture)]
    for h in others:
        root.removeHandler(h)
    try:
        yield
    finally:
        for h in others:
            root.addHandler(h)


def test_the_implementations_warnings_and_errors_are_recorded_with_their_op(captured):
    written, where = captured
    logging.getLogger("impl.collector").error("background work stopped: %s", "boom")
    where["at"] = (None, 3)
    logging.getLogger("impl").warning("between ops")
    logging.getLogger("impl.collector").info("below WARNING")
    logging.getLogger("implementation").error("another package's logger")
    logging.getLogger("ray.worker").error("Ray's own")
    assert written == [
        {"phase": "log", "i": 3, "after": 2, "level": "ERROR", "logger": "impl.collector",
         "message": "background work stopped: boom"},
        {"phase": "log", "i": None, "after": 3, "level": "WARNING", "logger": "impl",
         "message": "between ops"}]


def test_the_last_resort_still_prints_what_no_other_handler_takes(captured, capsys):
    with alone_on_the_root():
        logging.getLogger("impl.collector").error("shown as without the capture")
    assert capsys.readouterr().err == "shown as without the capture\n"
    handler = logging.StreamHandler()  # the user's own handler: the last resort stays quiet
    logging.getLogger("impl").addHandler(handler)
    try:
        with alone_on_the_root():
            logging.getLogger("impl.collector").error("once, by the user's handler")
    finally:
        logging.getLogger("impl").removeHandler(handler)
    assert capsys.readouterr().err == "once, by the user's handler\n"


def test_a_logger_that_does_not_propagate_to_the_root_is_recorded(captured, capsys):
    written, _ = captured
    impl = logging.getLogger("impl")
    impl.propagate = False
    try:
        with alone_on_the_root():
            logging.getLogger("impl.collector").error("kept from the root")
    finally:
        impl.propagate = True
    assert [r["message"] for r in written] == ["kept from the root"]
    # no handler on its way: Python's last resort prints it, with the capture as without
    assert capsys.readouterr().err == "kept from the root\n"


def test_a_record_the_closing_history_cannot_take_is_dropped_quietly(capsys):
    def closed(record):
        raise ValueError("I/O operation on closed file")

    capture = LogCapture(("impl",), closed, lambda: (None, None)).install()
    try:
        with alone_on_the_root():
            logging.getLogger("impl").error("while the driver exits")
    finally:
        capture.remove()
    assert capsys.readouterr().err == "while the driver exits\n"  # no "--- Logging error ---"


def test_a_python_warning_from_the_implementations_code_is_recorded_and_still_shown():
    import warnings

    import numpy as np

    from conformance.ops.log_capture import WarningCapture
    from impl.batches import from_flat

    written, shown = [], []
    before = warnings.showwarning
    warnings.showwarning = lambda *a, **k: shown.append(a[0])
    capture = WarningCapture(("impl",), written.append, lambda: (4, 3)).install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # the hook install() set stays in place here
            # torch's warning for a non-writable array, raised on impl's behalf: the
            # reference copies read-only arrays, so only a warning of impl's own file
            warnings.warn_explicit("from impl", UserWarning, from_flat.__code__.co_filename, 7)
            warnings.warn("from the test itself", UserWarning)
            from_flat({"x": np.zeros((2, 1))})  # writable: no warning
    finally:
        capture.remove()
        warnings.showwarning = before
    assert written == [{"phase": "log", "i": 4, "after": 3, "level": "WARNING",
                        "logger": "py.warnings", "message": "UserWarning: from impl (batches.py:7)"}]
    assert [str(m) for m in shown] == ["from impl", "from the test itself"]
