"""One attempt's hold on its job: the lease heartbeat of one attempt, and nothing else.

An :class:`AttemptLease` is made from the job that :meth:`Store.lease` returned and is bound to that attempt's
``lease_token``: its own thread renews the lease every ``heartbeat_s`` seconds with that token, and ``lost`` is set
only when the store refuses *this* token (another attempt took the job over, or the job was failed without it). It
is stopped and its thread joined before the attempt writes its outcome, so no renew of an attempt runs once its
outcome is written, and no heartbeat can touch another attempt's state: the next job gets a new object, a new
thread and a new token.
"""

from __future__ import annotations

import logging
import threading
import traceback
from typing import Any

log = logging.getLogger("layoutlab.worker")


class AttemptLease:
    """The lease of one attempt (one leased job): renewed from its own thread until :meth:`stop`.

    Post-conditions: ``lost`` is set only after ``store.renew(job_id, token, ...)`` answered False for this
    attempt's token; once :meth:`stop` returns, no renew of this attempt is in flight and none will start.
    A renew that raises (a database briefly locked, a dropped connection) is logged and retried at the next beat:
    it does not count as lost.
    """

    def __init__(self, store: Any, job: dict, lease_s: float, heartbeat_s: float) -> None:
        if not job.get("lease_token"):
            raise ValueError(f"job {job.get('id')} has no lease_token: only a job from Store.lease has an attempt")
        self.store, self.job_id, self.token = store, job["id"], job["lease_token"]
        self.lease_s, self.heartbeat_s = lease_s, heartbeat_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_until_stopped, name=f"layoutlab-lease-{self.job_id}",
                                        daemon=True)

    def start(self) -> AttemptLease:
        """Start renewing; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing and wait for the renewing thread to end."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> AttemptLease:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            try:
                held = self.store.renew(self.job_id, self.token, self.lease_s)
            except Exception as exc:
                from storage.outage import describe, is_outage

                why = describe(exc) if is_outage(exc) else traceback.format_exc()
                log.warning("renewing job %s failed: %s", self.job_id, why)
                continue
            if not held:
                log.warning("job %s: this attempt's lease was taken over; it stops", self.job_id)
                self.lost.set()
                return
