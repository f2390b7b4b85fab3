"""Awaiting a coroutine teardown as a long-lived asyncio program does
(``teardown(via="async")``, feature ``async_shutdown``).

The awaiting code's event loop goes on after the teardown returned, as a
service's does: ``asyncio.run()`` would also wait for the loop's worker
threads at its end, and so pass a teardown handed to one and never awaited
(regression variant ``async-shutdown-not-awaited``, measured: it passed
under ``asyncio.run``). The driver and the reproduction scripts run this
same function (the scripts copy its source).
"""
from __future__ import annotations


def await_in_a_running_loop(coroutine) -> None:
    """Run ``coroutine`` to its end in an event loop of its own, then close
    the loop without waiting for its worker threads."""
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(coroutine)
    finally:
        loop.close()  # its worker threads are not waited for
