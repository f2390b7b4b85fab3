"""Resolve an ``--impl`` name to an adapter, before any Ray starts."""
from __future__ import annotations

import importlib

BUILTINS = {
    "reference": "conformance.adapters.reference:ReferenceAdapter",
    "torchrl": "conformance.adapters.torchrl:TorchRLAdapter",
    "rllib": "conformance.adapters.rllib:RLlibAdapter",
    "tianshou": "conformance.adapters.tianshou:TianshouAdapter",
}
REGRESSION_PREFIX = "regression:"


class UsageError(ValueError):
    """A bad command-line choice; the message lists the valid ones."""


def valid_choices() -> list[str]:
    from conformance.adapters import regressions

    return sorted(BUILTINS) + [REGRESSION_PREFIX + r for r in regressions.ids()] + [
        "package.module:attr"
    ]


def adapter_class(name: str):
    """The adapter class (or object) ``name`` resolves to, imported but not
    built: its class attributes (``Adapter.package``) without the
    implementation installed."""
    if name.startswith(REGRESSION_PREFIX):
        from conformance.adapters.regressions import RegressionAdapter

        return RegressionAdapter
    target = BUILTINS.get(name, name)
    if ":" not in target:
        raise UsageError(
            f"unknown implementation {name!r}; valid choices: {', '.join(valid_choices())}"
        )
    module_name, attr = target.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an adapter that fails to import is a usage error
        raise UsageError(
            f"adapter {name!r} failed to import ({module_name}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise UsageError(f"adapter {name!r}: {module_name} has no attribute {attr!r}") from exc


def load_adapter(name: str):
    """Return an adapter instance for ``name`` or raise :class:`UsageError`."""
    if name.startswith(REGRESSION_PREFIX):
        from conformance.adapters import regressions

        rid = name[len(REGRESSION_PREFIX):]
        if rid not in regressions.ids():
            raise UsageError(
                f"unknown regression {rid!r}; valid: {', '.join(regressions.ids())}"
            )
        try:
            return regressions.make(rid)
        except Exception as exc:
            raise UsageError(f"adapter {name!r} failed to load: {type(exc).__name__}: {exc}") from exc
    obj = adapter_class(name)
    try:
        adapter = obj() if isinstance(obj, type) else obj
    except Exception as exc:  # e.g. the implementation's package is missing
        raise UsageError(f"adapter {name!r} failed to load: {type(exc).__name__}: {exc}") from exc
    if not hasattr(adapter, "make_collector"):
        raise UsageError(f"adapter {name!r} is not an Adapter (no make_collector)")
    return adapter
