"""RayReplayBuffer: a TensorDict storage held by one Ray actor."""

from __future__ import annotations

import numbers
import uuid
from typing import TYPE_CHECKING, Any

import ray

from impl import calls
from impl.actors import ReplayBufferActor
from impl.batches import from_flat, to_flat
from impl.component import RayComponent
from impl.errors import ComponentClosedError

if TYPE_CHECKING:  # the client is unpickled in actors without tensordict
    from tensordict import TensorDictBase

DEFAULT_REMOTE_CONFIG = {"num_cpus": 0}


class RayReplayBufferClient:
    """A picklable writer/reader of a RayReplayBuffer, for use inside other
    actors (e.g. collectors). Holds only the actor handle; owns nothing."""

    def __init__(self, handle: Any, batch_size: int | None = None) -> None:
        self._handle = handle
        self._batch_size = batch_size
        self.writer_id = uuid.uuid4().hex  # lets the writer's owner fence it off

    def extend(self, data: TensorDictBase | dict) -> int:
        """Write the rows of a TensorDict (or of a flat batch); returns how many
        (0 once this client was fenced off by its owner's shutdown)."""
        return self._ask("extend", to_flat(data), self.writer_id)

    def add(self, data: TensorDictBase) -> int:
        return self.extend(data.unsqueeze(0))

    def sample(self, batch_size: int | None = None) -> TensorDictBase:
        size = _batch_size(batch_size, self._batch_size)
        return from_flat(self._ask("sample", size))

    def __len__(self) -> int:
        return self._ask("length", called="len")

    @property
    def write_count(self) -> int:
        return self._ask("write_count")

    def _ask(self, method: str, *args: Any, called: str | None = None) -> Any:
        """The buffer actor's ``method``; ComponentClosedError once Ray is down
        (the user's ``ray.shutdown()`` ended the buffer with it: Ray's own error
        there is ``AttributeError: 'Worker' object has no attribute
        'core_worker'``, Ray 2.60.0, measured 2026-11-28)."""
        if not ray.is_initialized():
            raise ComponentClosedError(type(self).__name__, called or method, "its Ray runtime was shut down")
        return calls.get(calls.call(self._handle, method, *args))


class RayReplayBuffer(RayComponent):
    """A replay buffer of ``capacity`` rows in one Ray actor.

    ``extend``/``add`` write rows (circularly), ``sample`` draws ``batch_size``
    rows uniformly. ``client()`` gives a picklable handle through which other
    actors write. The data lives until this buffer's own ``close()``.

    Keyword Args:
        ray_init_config: ``ray.init`` kwargs, used only if Ray is not running.
        remote_config: actor options (resources...) over the default
            ``{"num_cpus": 0}``.
        ready_timeout: seconds to wait for the actor to start (None: no wait).
        shutdown_timeout: default bound of ``close()``.
    """

    _close_method = "close"

    def __init__(
        self,
        capacity: int,
        batch_size: int | None = None,
        *,
        ray_init_config: dict | None = None,
        remote_config: dict | None = None,
        ready_timeout: float | None = 30.0,
        shutdown_timeout: float = 10.0,
    ) -> None:
        super().__init__(shutdown_timeout)
        if not isinstance(capacity, numbers.Integral) or isinstance(capacity, bool) or capacity <= 0:
            raise ValueError(f"capacity must be a positive integer, got {capacity!r}")
        if batch_size is not None:
            _batch_size(batch_size, None)
        self.capacity = int(capacity)
        self.batch_size = batch_size
        config = {**DEFAULT_REMOTE_CONFIG, **(remote_config or {})}
        self._acquire(ray_init_config)
        try:
            self._actors.append(ReplayBufferActor.options(**config).remote(self.capacity))
            self._await_ready(ready_timeout, lambda i: "replay buffer actor", config)
        except BaseException:
            self._abort_construction()
            raise

    def _call(self, method: str, actor_method: str, *args: Any) -> Any:
        ref = calls.call(self._handles(method)[0], actor_method, *args)
        self._wait([ref], method)
        return self._fetch(ref, method)

    def extend(self, data: TensorDictBase) -> int:
        """Write the rows of ``data`` (flattened); returns how many."""
        self._check_open("extend")
        return self._call("extend", "extend", to_flat(data))

    def add(self, data: TensorDictBase) -> int:
        """Write one row."""
        self._check_open("add")
        return self._call("add", "extend", to_flat(data.unsqueeze(0)))

    def sample(self, batch_size: int | None = None) -> TensorDictBase:
        """``batch_size`` rows drawn uniformly (raises if the buffer is empty)."""
        self._check_open("sample")
        return from_flat(self._call("sample", "sample", _batch_size(batch_size, self.batch_size)))

    def __len__(self) -> int:
        return self._call("__len__", "length")

    @property
    def write_count(self) -> int:
        """Rows written since creation (also those overwritten since)."""
        return self._call("write_count", "write_count")

    def client(self) -> RayReplayBufferClient:
        """A picklable client that other actors can write through."""
        return RayReplayBufferClient(self._handles("client")[0], self.batch_size)

    def close(self, timeout: float | None = None, shutdown_ray: bool = False) -> None:
        """Kill the buffer actor (its data is gone); never raises.

        Args:
            timeout: bound in seconds (default: ``shutdown_timeout``).
            shutdown_ray: also shut Ray down, only if this library started it,
                once no other component holds it.
        """
        self._teardown(timeout, shutdown_ray, "close()")

    def __repr__(self) -> str:
        state = self._closed_reason and f"closed after {self._closed_reason}" or "open"
        return f"RayReplayBuffer(capacity={self.capacity}, batch_size={self.batch_size}, {state})"


def _batch_size(batch_size: int | None, default: int | None) -> int:
    size = default if batch_size is None else batch_size
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size <= 0:
        raise ValueError(f"batch_size must be a positive integer (given here or at construction), got {size!r}")
    return int(size)
