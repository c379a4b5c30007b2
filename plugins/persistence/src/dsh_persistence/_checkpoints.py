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
import threading
import time
from typing import TYPE_CHECKING

from dsh import get_logger

if TYPE_CHECKING:
    from dsh_persistence._writer import SessionWriter

__all__ = ["Checkpointer"]

log = get_logger("dsh.persistence")

#: (when, order, writer): the writer's checkpoint is looked at then
_Job = tuple[float, int, "SessionWriter"]


class Checkpointer:
    """Runs ``writer.write(durable)`` ``delay`` seconds after a request, unless a write
    began in between (the turn's flush, usually): that write stored what was asked for.

    A writer has at most one job in the queue. A request while one is queued, or while
    the writer's checkpoint is already asked for, costs no lock wait and no wake-up:
    when its job comes up, the thread files it again for the newest request's time if
    a write overtook the older one. So turns shorter than ``delay`` cost the thread one
    look per ``delay``, not one per turn (each look takes the GIL from the event loop).
    The thread is woken early only by a job due before everything it waits for.
    ``close()`` (also run at interpreter exit) writes everything pending at once, then
    stops.

    A request is always served, also one made while ``close()`` runs (the plugin's
    close runs in a worker thread while ``session_event`` asks on the event loop) or
    after it (a harness started again in the process): it starts a new thread. Each
    thread has its own stop flag, so the thread ``close()`` waits for stops whatever
    the new one does; it writes at once what is queued when it looks, then ends.
    """

    def __init__(self) -> None:
        self._jobs: list[_Job] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()  # the running thread's: set by ``close()``

    def request(self, writer: SessionWriter, delay: float, durable: bool) -> None:
        if writer.scheduled:
            return  # merged into the checkpoint already asked for
        due = time.monotonic() + delay
        writer.due, writer.durable_checkpoint = due, durable
        writer.scheduled = True
        with self._wake:
            queued = writer.queued_due
            if queued is not None and queued <= due:
                return  # its job comes up first and files this request
            writer.queued_due = due
            order = next(self._order)
            heapq.heappush(self._jobs, (due, order, writer))
            if self._thread is None:
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run,
                    args=(self._stop,),
                    name="dsh-persistence-checkpoints",
                    daemon=True,
                )
                self._thread.start()
                atexit.register(self.close)
            elif self._jobs[0][1] == order:  # due before what the thread waits for
                self._wake.notify()

    def _run(self, stop: threading.Event) -> None:
        try:
            self._loop(stop)
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

    def _loop(self, stop: threading.Event) -> None:
        while True:
            with self._wake:
                while True:
                    if not self._jobs:
                        if stop.is_set():
                            return
                        self._wake.wait()
                        continue
                    wait = self._jobs[0][0] - time.monotonic()
                    if wait <= 0 or stop.is_set():
                        break
                    self._wake.wait(min(wait, threading.TIMEOUT_MAX))
                writer = self._next(stop.is_set())
            if writer is None:
                continue
            try:
                writer.write(writer.durable_checkpoint)
            except Exception as exc:  # the turn's flush retries and reports
                log.warning("checkpoint of session %r failed: %s", writer.session.id, exc)

    def _next(self, stopping: bool) -> SessionWriter | None:
        """The writer whose checkpoint is due now (None: the job needs no write now;
        ``stopping``: every job is due now). Called with the lock held."""
        due, _, writer = heapq.heappop(self._jobs)
        if writer.queued_due == due:
            writer.queued_due = None
        if not writer.scheduled:
            return None  # a write began after the request and stored what it asked for
        if writer.due > due and not stopping:  # asked again after a write: file it
            if writer.queued_due is None:
                writer.queued_due = writer.due
                heapq.heappush(self._jobs, (writer.due, next(self._order), writer))
            return None
        return writer

    def close(self) -> None:
        """Write what is pending now and stop the thread (a later request, also one made
        while this waits for the thread, starts a new one: see the class)."""
        with self._wake:
            thread, self._thread = self._thread, None
            self._stop.set()
            self._wake.notify_all()  # the stopped thread, whichever waits
        if thread is not None:
            thread.join()
        with self._wake:
            if self._thread is None:  # else a request meanwhile: its thread is served
                atexit.unregister(self.close)
