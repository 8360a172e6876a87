"""The process's parse threads: one pool per thread count, kept between reads.

A read used to start its own threads and join them at the end. Starting them,
and growing each new thread's string workspace (:mod:`arrow_bridge.fast_path`)
again, is a fixed cost every read pays; pyarrow keeps one CPU pool for the
process. Reads with the same ``n_threads`` now share a pool, so concurrent reads
share its threads rather than oversubscribe the cores.

A read takes its pool from :func:`parse_threads` and gives it back with
:func:`release`. On a parse thread (a user callback that reads a file) that is
a private pool, whose threads count as parse threads too: waiting on a pool
whose threads wait on it could deadlock, at any depth.
A forked child has none of the parent's threads, so it forgets the pools.

>>> pool = parse_pool(2)
>>> pool is parse_pool(2), pool.submit(on_parse_thread).result()
(True, True)
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

THREAD_NAME_PREFIX = "ndp-parse"
#: The most a parse thread keeps between spans in each of its workspaces (the
#: tokenizer's arrays, the fused path's string stretches): the threads outlive a
#: read, so a larger one (huge ``block_size``, long records) is made for its span
#: and dropped.
WORKSPACE_KEEP_BYTES = 64 << 20

_pools: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()
_this_thread = threading.local()


def parse_pool(threads: int) -> Optional[ThreadPoolExecutor]:
    """The shared pool of ``threads`` parse threads (started on first use), or
    None when called from a parse thread."""
    if on_parse_thread():
        return None
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix=THREAD_NAME_PREFIX,
                                                        initializer=_mark_parse_thread)
        return pool


def parse_threads(threads: int) -> Optional[ThreadPoolExecutor]:
    """The pool a read on ``threads`` threads parses on: none for one thread,
    the shared one, or on a parse thread a private one (:func:`release` it)."""
    if threads <= 1:
        return None
    return parse_pool(threads) or ThreadPoolExecutor(threads, initializer=_mark_parse_thread)


def release(pool: Optional[ThreadPoolExecutor]) -> None:
    """Done with a pool from :func:`parse_threads`: a private one's threads end
    (once its running tasks are done), the shared ones stay."""
    if pool is not None and all(pool is not shared for shared in _pools.values()):
        pool.shutdown(wait=True, cancel_futures=True)


def on_parse_thread() -> bool:
    """Whether the calling thread is a parse thread (of a shared or a private pool)."""
    return getattr(_this_thread, "parses", False)


def _mark_parse_thread() -> None:
    _this_thread.parses = True


def _forget_pools() -> None:
    global _lock
    _lock = threading.Lock()  # the parent may have held it at the fork
    _pools.clear()


os.register_at_fork(after_in_child=_forget_pools)
