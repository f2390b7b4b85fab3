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
"""
from __future__ import annotations

import logging

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
