"""myfork: the reference components of ray-lifecycle-conformance (``impl``),
forked, with ONE lifecycle bug: ``RayReplayBuffer.close()`` is not idempotent
(a second close raises). Nothing else is changed."""
from __future__ import annotations

import impl

__version__ = "0.1.0"
__all__ = ["RayCollector", "RayReplayBuffer", "RayEvalWorker", "ComponentClosedError"]

ComponentClosedError = impl.ComponentClosedError


class RayCollector(impl.RayCollector):
    pass


class RayEvalWorker(impl.RayEvalWorker):
    pass


class RayReplayBuffer(impl.RayReplayBuffer):
    def close(self, timeout=None, shutdown_ray=False):
        if self._closed_reason is not None:  # the bug: close() is not idempotent
            raise RuntimeError("RayReplayBuffer.close(): the buffer is already closed")
        super().close(timeout, shutdown_ray)
