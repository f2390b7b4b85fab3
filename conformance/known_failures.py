"""Known failures: scenario ids a fork expects to fail, each with a reason.

The format follows array-api-tests' xfails files: one scenario id per line,
a ``#`` and the reason after it; blank lines and lines starting with ``#``
are ignored. A listed scenario runs as an expected failure: it does not turn
the gate red; if it passes, the run reports it so the entry can be deleted.

    order/local/user/collector>ray>buffer>evaluator  # close() after ray.shutdown restarts Ray
"""
from __future__ import annotations


def parse(text: str, source: str = "<known failures>") -> dict[str, str]:
    """``{scenario_id: reason}``; a line without a reason is an error."""
    out = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        sid, sep, reason = line.partition("#")
        sid, reason = sid.strip(), reason.strip()
        if not sep or not reason:
            raise ValueError(f"{source}:{n}: {sid!r} has no '# reason'")
        if sid.count("/") < 3:
            raise ValueError(f"{source}:{n}: {sid!r} is not a scenario id "
                             "(family/fixture/owner/variant)")
        out[sid] = reason
    return out


def load(path: str) -> dict[str, str]:
    with open(path) as f:
        return parse(f.read(), path)
