"""Where runs execute: local threads, or a Dask cluster.

Both executors take the same picklable tasks and yield outcomes in the
order runs finish, so that the sweep can store each result the moment it
exists. Neither raises for a failed run; a Dask worker lost under a task
becomes a failed outcome like any other.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from .runner import Task, execute_task


class Executor(Protocol):
    """Runs tasks and yields their outcomes as they finish."""

    name: str

    def run(self, tasks: Iterable[Task]) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...


def default_jobs() -> int:
    """One run per core: each run is a single-threaded emulator process."""
    return os.cpu_count() or 1


def lost_outcome(task: Task, error: str) -> dict[str, Any]:
    """The outcome of a task whose worker failed before reporting."""
    return {"key": task.key, "status": "failed", "error": error, "errors": [error],
            "returncode": None, "stderr": "", "attempts": 1, "seconds": 0.0, "argv": list(task.argv)}


class LocalExecutor:
    """Runs tasks on this machine, `jobs` at a time.

    Threads suffice: each one only waits on an emulator subprocess. Tasks are
    handed to the pool no faster than it runs them, so an interrupted sweep
    leaves no backlog behind.
    """

    name = "local"

    def __init__(self, jobs: int | None = None):
        self.jobs = max(1, jobs or default_jobs())
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="rvnvmm-run")

    def run(self, tasks: Iterable[Task]) -> Iterator[dict[str, Any]]:
        pending: dict[Future[dict[str, Any]], Task] = {}
        queue = iter(tasks)
        try:
            while True:
                while len(pending) < self.jobs:
                    task = next(queue, None)
                    if task is None:
                        break
                    pending[self._pool.submit(execute_task, task)] = task
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    task = pending.pop(future)
                    try:
                        yield future.result()
                    except Exception as e:  # a bug in execute_task, not a failed run
                        yield lost_outcome(task, f"{type(e).__name__}: {e}")
        finally:
            for future in pending:
                future.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Runs tasks on a Dask distributed cluster.

    With a scheduler address (or the path of a scheduler file), it connects
    to a running cluster (for Slurm or PBS, one started by dask-jobqueue or
    by a batch job, see docs/workflow.md); without one,
    it starts a LocalCluster of `jobs` single-threaded worker processes.
    Workers must see the rvnvmm binary and guest programs at the same paths
    as this machine (a shared file system); results come back through Dask,
    so only this machine writes the results store.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, jobs: int | None = None):
        from dask.distributed import Client, LocalCluster

        self._cluster = None
        if scheduler and os.path.isfile(scheduler):  # a `dask scheduler --scheduler-file`
            self.client = Client(scheduler_file=scheduler)
        elif scheduler:
            self.client = Client(scheduler)
        else:
            self._cluster = LocalCluster(n_workers=max(1, jobs or default_jobs()), threads_per_worker=1,
                                         processes=True, dashboard_address=None,
                                         silence_logs=logging.ERROR)
            self.client = Client(self._cluster)

    def run(self, tasks: Iterable[Task]) -> Iterator[dict[str, Any]]:
        from dask.distributed import as_completed

        futures = {self.client.submit(execute_task, task, pure=False): task for task in tasks}
        if not futures:
            return
        try:
            for future in as_completed(futures):
                task = futures[future]
                try:
                    yield future.result()
                except Exception as e:  # worker lost, task killed, ...
                    yield lost_outcome(task, f"dask: {type(e).__name__}: {e}")
                finally:
                    future.release()
        finally:
            unfinished = [f for f in futures if not f.done()]
            if unfinished:
                self.client.cancel(unfinished)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(kind: str = "local", jobs: int | None = None, scheduler: str | None = None) -> Executor:
    """An executor by name: `local` or `dask`."""
    if kind == "local":
        if scheduler:
            raise ValueError("--scheduler needs --executor dask")
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(scheduler, jobs)
    raise ValueError(f"unknown executor '{kind}' (local or dask)")
