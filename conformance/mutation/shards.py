"""``--shard I/N`` of ``mutate run`` and ``mutate sample``: what it means,
parsed in one place."""
from __future__ import annotations

import zlib


def parse(text: str) -> tuple[int, int]:
    """``I/N`` as ``(I, N)``, 1 <= I <= N; ValueError naming what is wrong."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"{text!r}: want I/N, e.g. 1/2") from None
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: want 1 <= I <= N")
    return index, count


def in_shard(job_id: str, shard: str | None) -> bool:
    """Whether ``mutate run --shard`` gives the mutant ``job_id`` to ``shard``
    (by a hash of its id: each shard's share is fixed, whatever runs first)."""
    if not shard:
        return True
    index, count = parse(shard)
    return zlib.crc32(job_id.encode()) % count == index - 1


def deal(order: list, count: int, shard: str | None) -> tuple[list, int]:
    """``mutate sample --shard``: shard I takes every Nth of ``order`` from
    the Ith, and its share of the ``count`` the whole sample judges."""
    if not shard:
        return order, count
    index, shards = parse(shard)
    return order[index - 1::shards], len(range(index - 1, count, shards))
