"""Mid-turn checkpoints: a running turn written to disk shortly after it did something.

``session_event`` must stay cheap and cannot await, so it only asks for a checkpoint;
one thread writes it ``delay`` seconds later. A turn that ends sooner is written by its
flush and the checkpoint then finds nothing new: short turns cost no extra I/O, long
ones (a tool that runs for minutes) are on disk within ``delay`` of each step.
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh_persistence._writer import SessionWriter

__all__ = ["Checkpointer"]

log = logging.getLogger("dsh.persistence")

#: (when, order, writer, durable, the writer's generation when it was asked for)
_Job = tuple[float, int, "SessionWriter", bool, int]


class Checkpointer:
    """Runs ``writer.write(durable)`` once per request, ``delay`` seconds after it.

    Requests for a writer that already has one pending are merged into it; a pending
    checkpoint that a write overtook (the turn's flush, usually) is dropped unrun, so
    a short turn costs the thread nothing. The thread is woken early only by a request
    due before everything it already waits for. ``close()`` (also run at interpreter
    exit) writes everything pending at once, then stops.
    """

    def __init__(self) -> None:
        self._jobs: list[_Job] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    def request(self, writer: SessionWriter, delay: float, durable: bool) -> None:
        if writer.scheduled:
            return
        writer.scheduled = True
        order = next(self._order)
        job = (time.monotonic() + delay, order, writer, durable, writer.generation)
        with self._wake:
            heapq.heappush(self._jobs, job)
            if self._thread is None:
                self._closing = False
                self._thread = threading.Thread(
                    target=self._run, name="dsh-persistence-checkpoints", daemon=True
                )
                self._thread.start()
                atexit.register(self.close)
            elif self._jobs[0][1] == order:  # due before what the thread waits for
                self._wake.notify()

    def _run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # a bug: say so, and let the next request restart it
            with self._wake:
                if self._thread is threading.current_thread():
                    self._thread = None
                pending = len(self._jobs)
            log.error(
                "the checkpoint thread stopped (%s: %s); %d pending checkpoint(s) wait for "
                "the next request, and each turn's flush still writes its events",
                type(exc).__name__,
                exc,
                pending,
                exc_info=exc,
            )

    def _loop(self) -> None:
        while True:
            with self._wake:
                while True:
                    if not self._jobs:
                        if self._closing:
                            return
                        self._wake.wait()
                        continue
                    wait = self._jobs[0][0] - time.monotonic()
                    if wait <= 0 or self._closing:
                        break
                    self._wake.wait(min(wait, threading.TIMEOUT_MAX))
                _, _, writer, durable, generation = heapq.heappop(self._jobs)
            if generation != writer.generation:
                continue  # a later write stored what this checkpoint was for
            try:
                writer.write(durable)
            except Exception as exc:  # the turn's flush retries and reports
                log.warning("checkpoint of session %r failed: %s", writer.session.id, exc)

    def close(self) -> None:
        """Write what is pending now and stop the thread (a later request restarts it)."""
        with self._wake:
            thread, self._thread = self._thread, None
            self._closing = True
            self._wake.notify()
        if thread is not None:
            thread.join()
            atexit.unregister(self.close)
