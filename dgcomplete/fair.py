"""The model thread's queue: one worker, jobs taken round-robin across LSP sessions ("lanes").

With a FIFO, one editor's typing storm (or a queue of rewrites) would hold every other editor's requests behind
it; here each lane with work gets a turn in order, and within a lane jobs run in the order they came. The lane
of a job is the :data:`LANE` context variable at submission time: each daemon connection sets it once for its
reader task, and the asyncio tasks that handle its messages inherit it.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

LANE: contextvars.ContextVar[str] = contextvars.ContextVar("dgcomplete_lane", default="")

_Job = tuple[Future, Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class FairExecutor(Executor):
    """A one-thread executor (like ``ThreadPoolExecutor(max_workers=1)``) that serves lanes in turn."""

    def __init__(self, name: str = "dgcomplete-model") -> None:
        self._lanes: OrderedDict[str, deque[_Job]] = OrderedDict()
        self._cv = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._name = name
        self.running: str | None = None  # the lane whose job runs now
        self.done = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        with self._cv:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._lanes.setdefault(LANE.get(), deque()).append((fut, fn, args, kwargs))
            if self._thread is None:
                # not a daemon thread: the interpreter waits for the running step at exit, as with
                # ThreadPoolExecutor (a daemon thread killed inside torch can crash the exit)
                self._thread = threading.Thread(target=self._work, name=f"{self._name}_0")
                self._thread.start()
                threading._register_atexit(self._at_exit)  # type: ignore[attr-defined]
            self._cv.notify()
        return fut

    def queued(self) -> dict[str, int]:
        """Jobs waiting per lane (the running one and cancelled ones excluded)."""
        with self._cv:
            counts = {lane: sum(1 for job in q if not job[0].cancelled()) for lane, q in self._lanes.items()}
        return {lane: n for lane, n in counts.items() if n}

    def _take(self) -> _Job | None:
        with self._cv:
            while not self._lanes and not self._closed:
                self._cv.wait()
            if not self._lanes:
                return None
            lane, q = next(iter(self._lanes.items()))
            job = q.popleft()
            if q:
                self._lanes.move_to_end(lane)  # its next job waits for the other lanes' turns
            else:
                del self._lanes[lane]
            self.running = lane
            return job

    def _work(self) -> None:
        while (job := self._take()) is not None:
            fut, fn, args, kwargs = job
            if fut.set_running_or_notify_cancel():  # a job whose awaiting task was cancelled never runs
                try:
                    fut.set_result(fn(*args, **kwargs))
                except BaseException as e:  # noqa: BLE001 - handed to the waiter, as ThreadPoolExecutor does
                    fut.set_exception(e)
            with self._cv:
                self.running = None
                self.done += 1
            del job, fut, fn, args, kwargs

    def _at_exit(self) -> None:
        self.shutdown(wait=True)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cv:
            self._closed = True
            if cancel_futures:
                for q in self._lanes.values():
                    for fut, *_ in q:
                        fut.cancel()
                self._lanes.clear()
            self._cv.notify_all()
            thread = self._thread
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join()
