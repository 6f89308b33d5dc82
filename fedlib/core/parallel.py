"""Run independent jobs (cached training runs) one after another or in a pool of worker processes.

On 2 CPU cores two single-threaded workers train ~1.4-1.75x more samples per second than one process with torch's
two threads (small convolutions leave the second thread idle; measured on DTFL's ResNet-20, width 1 / 0.5). The
pool uses the ``spawn`` start method (forking a process whose OpenMP pool is running can hang) and sets every
worker to ``threads`` torch threads. Jobs share nothing but the result store's folder and every run draws from its
own seed streams on the CPU, so the records follow the same sample path whatever ``workers`` is; with another
torch thread count CPU convolutions may sum in another order (float-level differences, not in the cache key).
Jobs that share a cached run compute it once: a worker that reaches a run another worker is computing (its lock in
the result store, :mod:`fedlib.core.runlock`) puts that job back at the end of the queue and takes the next one;
on its second attempt it waits for the other worker's record.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable

from tqdm.auto import tqdm

from .runlock import RunInProgress, deferring
from .validate import check_callable, check_instance, check_int, check_list, check_str


def set_threads(threads: int) -> int:
    """Set this process's torch CPU threads (a notebook's ``threads`` parameter); 0 leaves torch's default.
    Returns the number of threads torch now uses.

    Raises:
        ValueError / ParameterTypeError: ``threads`` not an integer >= 0 (the message names ``threads``).
    """
    import torch
    threads = check_int("threads", threads, 0, extra=" (0: torch's default)")
    if threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def _init_worker(threads: int) -> None:
    import torch
    torch.set_num_threads(threads)


def _call(fn: Callable[..., dict], job: dict, defer: bool):
    with deferring(defer):
        return fn(**job)


def map_jobs(fn: Callable[..., dict], jobs: list[dict], workers: int = 1, threads: int = 1,
             desc: str = "runs", cost: Callable[[dict], float] | None = None) -> list:
    """``[fn(**job) for job in jobs]``, in ``jobs`` order, with a tqdm bar.

    Args:
        fn: a module-level function (workers import it by name). jobs: keyword arguments of each call (picklable;
            pass dataset names, not tensors). workers: 1 = this process (torch's thread setting unchanged);
            > 1 = that many spawned worker processes. threads: torch threads per worker (>= 1).
        cost: ``cost(job)`` -> a relative running time; a pool starts the costliest jobs first (longest
            processing time first: the last wave leaves fewer workers idle). Results keep ``jobs`` order.

    Raises:
        ValueError / ParameterTypeError: workers or threads not an integer >= 1, ``jobs`` not a non-empty list of
        dicts, ``fn`` / ``cost`` not callable. Whatever a job raises.
    """
    check_callable("fn", fn, allow_none=False)
    workers = check_int("workers", workers, 1)
    threads = check_int("threads", threads, 1)
    jobs = check_list("jobs", jobs, lambda k, v: check_instance(k, v, dict, "a dict of keyword arguments"))
    check_str("desc", desc, nonempty=False)
    check_callable("cost", cost)
    start = list(range(len(jobs)))
    if cost is not None:
        start.sort(key=lambda i: -cost(jobs[i]))     # stable: equal costs keep their order
    if workers == 1 or len(jobs) <= 1:
        return [fn(**job) for job in tqdm(jobs, desc=desc)]
    out: list = [None] * len(jobs)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx, initializer=_init_worker,
                             initargs=(threads,)) as pool:
        pending = {pool.submit(_call, fn, jobs[i], True): i for i in start}
        bar = tqdm(total=len(jobs), desc=desc)
        while pending:
            fut = next(as_completed(pending))
            i = pending.pop(fut)
            try:
                out[i] = fut.result()
            except RunInProgress:           # another worker trains this run: retry after the queued jobs
                pending[pool.submit(_call, fn, jobs[i], False)] = i
                continue
            bar.update()
        bar.close()
    return out
