"""What the implementation logs, recorded in the history as ``log`` side records.

An implementation that cannot raise (a teardown, a background thread) tells
the user through Python's ``logging``: the oracle ``unraised_error_logged``
judges what it logged and during which op. :class:`LogCapture` is a handler
on each of the adapter's loggers (``Adapter.log_names``, and their children
through them; also where those loggers do not propagate to the root) that records every record
at ``WARNING`` or above with the op running then (or the last op, between
ops). What the user sees is unchanged: a record no other handler takes is
still printed by Python's last-resort handler, as without the capture (the
capture would otherwise silence it; with ``logging.lastResort`` set to None
it is not printed, and Python's one-time "no handlers" notice is not either).
Records of Ray's workers are not the driver's, and the interpreter exit's
(atexit teardowns) come after the history is closed: neither is recorded;
a record that comes while the history closes is dropped, never printed as a
logging error.

A Python warning (``warnings.warn``, also one a library raises on the
implementation's behalf, as torch's "non-writable NumPy array") that the
warnings filters show and that is attributed to a file of the implementation's
packages (the modules the adapter's logger names name) is recorded the same
way, at ``WARNING`` under the logger ``py.warnings``: the user sees it as
they see a logged warning. It is shown as before. Not seen: a warning the
default filters hide (``DeprecationWarning`` outside ``__main__``), and one
whose ``stacklevel`` attributes it to its caller's file.
"""
from __future__ import annotations

import logging
import os
import warnings

#: the characters of a record's message kept
MESSAGE_MAX = 500


def _other_handler(name: str, mine: logging.Handler) -> bool:
    """Whether a handler besides ``mine`` takes a record of logger ``name``
    (``logging.Logger.callHandlers``' search, where none sends it to
    ``logging.lastResort``)."""
    logger = logging.getLogger(name)
    while logger is not None:
        if any(h is not mine for h in logger.handlers):
            return True
        if not logger.propagate:
            return False
        logger = logger.parent
    return False


class LogCapture(logging.Handler):
    """Records the adapter's log records (``names``: logger names, each with
    its children) through ``write``, with the op ``where()`` says."""

    def __init__(self, names: tuple, write, where) -> None:
        super().__init__(logging.WARNING)
        self.names = tuple(names)
        self.write = write
        self.where = where  # () -> (running op index or None, last op index or None)

    def emit(self, record: logging.LogRecord) -> None:
        # only the adapter's loggers (and their children) carry this handler
        try:
            running, last = self.where()
            self.write({"phase": "log", "i": running, "after": last,
                        "level": record.levelname, "logger": record.name,
                        "message": record.getMessage()[:MESSAGE_MAX]})
        except Exception:  # noqa: BLE001 - the history closing: the record is not the user's
            pass  # handleError would print a traceback that clean_stderr blames on them
        last_resort = logging.lastResort
        if last_resort is not None and record.levelno >= last_resort.level \
                and not _other_handler(record.name, self):
            last_resort.handle(record)

    def install(self) -> "LogCapture":
        for name in self.names:
            logging.getLogger(name).addHandler(self)
        return self

    def remove(self) -> None:
        for name in self.names:
            logging.getLogger(name).removeHandler(self)


def _package_dirs(names: tuple) -> tuple:
    """The directories of the packages (or modules) named ``names``, found
    without importing them; the ones not found are left out."""
    from importlib.util import find_spec

    out = []
    for name in names:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            out += [os.path.realpath(d) + os.sep for d in spec.submodule_search_locations]
        elif spec.origin:
            out.append(os.path.realpath(spec.origin))
    return tuple(out)


class WarningCapture:
    """Records the Python warnings attributed to the implementation's files
    (``names``: its packages, as ``Adapter.log_names``) through ``write``,
    with the op ``where()`` says, and shows every warning as before."""

    def __init__(self, names: tuple, write, where) -> None:
        self.dirs = _package_dirs(names)
        self.write = write
        self.where = where
        self._shown = None

    def _show(self, message, category, filename, lineno, file=None, line=None):
        path = os.path.realpath(filename or "")
        if any(path == d or path.startswith(d) for d in self.dirs):
            try:
                running, last = self.where()
                self.write({"phase": "log", "i": running, "after": last, "level": "WARNING",
                            "logger": "py.warnings",
                            "message": (f"{category.__name__}: {message} "
                                        f"({os.path.basename(path)}:{lineno})")[:MESSAGE_MAX]})
            except Exception:  # noqa: BLE001 - the history closing, as LogCapture.emit
                pass
        self._shown(message, category, filename, lineno, file, line)

    def install(self) -> "WarningCapture":
        self._shown, warnings.showwarning = warnings.showwarning, self._show
        return self

    def remove(self) -> None:
        if warnings.showwarning == self._show:
            warnings.showwarning = self._shown
