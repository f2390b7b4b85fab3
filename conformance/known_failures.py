"""Known failures: scenario ids a fork expects to fail, each with a reason.

The format follows array-api-tests' xfails files: one scenario id per line,
a ``#`` and the reason after it; blank lines and lines starting with ``#``
are ignored. A listed scenario runs as an expected failure: it does not turn
the gate red; if it passes, the run reports it so the entry can be deleted.

    order/local/user/collector>ray>buffer>evaluator  # close() after ray.shutdown restarts Ray

A list of scenarios to compare (``compare --scenarios-from``, e.g.
``ci/torchrl-slice.txt``) may declare, between an id and its ``#``, the
failing oracles that vary between runs of that scenario (a race the
scenario does not control decides them; measured and said in the reason):
``varies:clean_stderr`` or ``varies:clean_stderr,others_untouched``.
"""
from __future__ import annotations


#: the marker of oracles whose failure varies between runs of one scenario
#: (``compare`` reads it): ``id  varies:clean_stderr,others_untouched  # why``
VARIES = "varies:"


def _entries(text: str, source: str):
    """``(scenario_id, reason, varies)`` of each entry line."""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, sep, reason = line.partition("#")
        sid, *marks = head.split()
        reason = reason.strip()
        if not sep or not reason:
            raise ValueError(f"{source}:{n}: {sid!r} has no '# reason'")
        if sid.count("/") < 3:
            raise ValueError(f"{source}:{n}: {sid!r} is not a scenario id "
                             "(family/fixture/owner/variant)")
        bad = [m for m in marks if not m.startswith(VARIES) or m == VARIES]
        if bad:
            raise ValueError(f"{source}:{n}: {' '.join(bad)!r} after {sid!r}: only "
                             f"'{VARIES}ORACLE[,ORACLE]' may stand between an id and its '#'")
        varies = frozenset(o for m in marks for o in m[len(VARIES):].split(",") if o)
        yield sid, reason, varies


def parse(text: str, source: str = "<known failures>") -> dict[str, str]:
    """``{scenario_id: reason}``; a line without a reason is an error."""
    return {sid: reason for sid, reason, _ in _entries(text, source)}


def varying(text: str, source: str = "<known failures>") -> dict[str, frozenset]:
    """``{scenario_id: oracles}`` of the entries that declare ``varies:``: the
    oracles that fail in some runs of the scenario and not in others
    (measured), which ``compare`` leaves out of a ``fail``'s oracles."""
    return {sid: varies for sid, _, varies in _entries(text, source) if varies}


def load(path: str) -> dict[str, str]:
    with open(path) as f:
        return parse(f.read(), path)


def load_varying(path: str) -> dict[str, frozenset]:
    with open(path) as f:
        return varying(f.read(), path)
