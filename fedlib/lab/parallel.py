"""Run independent jobs (cached training runs) one after another or in a pool of worker processes.

On 2 CPU cores two single-threaded workers train ~1.4-1.75x more samples per second than one process with torch's
two threads (small convolutions leave the second thread idle; measured on DTFL's ResNet-20, width 1 / 0.5). The
pool uses the ``spawn`` start method (forking a process whose OpenMP pool is running can hang) and sets every
worker to ``threads`` torch threads. Jobs share nothing but the result store's folder and every run draws from its
own seed streams on the CPU, so the records follow the same sample path whatever ``workers`` is, and every job runs
on ``threads`` torch threads, in this process too (``workers=1``), because with another thread count CPU
convolutions may sum in another order (float-level differences that the cache key does not see).
Jobs that share a cached run compute it once: a worker that reaches a run another worker is computing (its lock in
the result store, :mod:`fedlib.lab.runlock`) puts that job back at the end of the queue and takes the next one;
on its second attempt it waits for the other worker's record.

Any ``concurrent.futures.Executor`` can take the pool's place (``workers=<executor>``), Dask's included
(``distributed.Client(address).get_executor()``), and ``FEDLIB_DASK_SCHEDULER=tcp://host:8786`` in the
environment sends every :func:`map_jobs` call, whatever its ``workers``, to that scheduler
(:func:`cluster_executor`). The workers of a cluster must share the result store's folder (``FEDLIB_CACHE_DIR``)
and run the same fedlib source (the store keys records by its hash). Each job sets its worker's torch threads to
``threads`` before it runs, so a record does not depend on where it ran.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Callable, Iterator, Mapping

from tqdm.auto import tqdm

from fedlib.lab.runlock import RunInProgress, deferring
from fedlib.core.validate import check_callable, check_instance, check_int, check_list, check_str


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


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """This process on ``threads`` torch threads for the block, the caller's count restored after.

    Raises:
        ValueError / ParameterTypeError: ``threads`` not an integer >= 1.
    """
    import torch
    threads = check_int("threads", threads, 1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


THREADS_VAR = "FEDLIB_THREADS"
"""The environment variable that states a notebook kernel's thread count (default 1: :func:`notebook_threads`)."""


def notebook_threads(environ: Mapping[str, str] | None = None) -> int:
    """The thread count a notebook computes with: ``FEDLIB_THREADS`` from ``environ`` (default ``os.environ``) when
    set, else 1.

    One thread is the default because on a shared or small machine torch's own default (one thread per core, each
    spinning while it waits) is slower, not faster: ``hist_3_bounds`` on a loaded 2-core machine took 813 s in
    JupyterLab before the pin, 405 s with torch's default threads and 108 s with one OpenMP thread.

    Raises:
        ValueError: ``FEDLIB_THREADS`` is set but not a positive integer (the message names the variable).
    """
    raw = (os.environ if environ is None else environ).get(THREADS_VAR)
    if raw is None:
        return 1
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{THREADS_VAR} must be a positive integer (the notebook's torch and OpenMP threads), "
                         f"got {raw!r}; unset it for 1 thread")
    return int(text)


def pin_threads(environ: Mapping[str, str] | None = None) -> int:
    """Set this process's torch threads (which are its OpenMP / MKL threads) to :func:`notebook_threads` and state
    the count in ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` for the processes it starts. Returns the count.

    Raises:
        ValueError: as :func:`notebook_threads`.
    """
    n = notebook_threads(environ)
    set_threads(n)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(n)
    return n


def _init_worker(threads: int) -> None:
    import torch
    torch.set_num_threads(threads)


def _call(fn: Callable[..., dict], job: dict, defer: bool, threads: int | None = None):
    if threads is not None:                   # a worker we did not start (an Executor's): pin its threads per job
        _init_worker(threads)
    with deferring(defer):
        return fn(**job)


#: the environment variable that points :func:`map_jobs` at a Dask scheduler
SCHEDULER_ENV = "FEDLIB_DASK_SCHEDULER"
_ADDRESS_FORMS = ("a Dask scheduler address: tcp://HOST:PORT or tls://HOST:PORT (HOST non-empty, an IPv6 host in "
                  "brackets such as [::1]; PORT an integer 1-65535, e.g. tcp://127.0.0.1:8786) or inproc://ADDRESS")


def check_scheduler_address(address: str) -> str:
    """``address`` if it is a Dask scheduler address :func:`cluster_executor` can use: ``tcp://HOST:PORT`` or
    ``tls://HOST:PORT`` with a non-empty HOST (an IPv6 host in brackets, ``tcp://[::1]:8786``) and PORT an integer
    1-65535, or a non-empty ``inproc://`` address. Only the text is checked; nothing is connected to.

    Raises:
        ParameterTypeError: ``address`` is not a string.
        ValueError: any other address; the message names ``FEDLIB_DASK_SCHEDULER`` (the variable that usually
            carries it), what is wrong and what is allowed.
    """
    check_str("address", address, nonempty=False)

    def refuse(why: str):
        raise ValueError(f"{SCHEDULER_ENV} (address) must be {_ADDRESS_FORMS}; {why}, got {address!r}")
    scheme, sep, rest = address.partition("://")
    if not sep or scheme not in ("tcp", "tls", "inproc"):
        refuse("the scheme must be tcp://, tls:// or inproc://")
    if scheme == "inproc":
        if not rest:
            refuse("the inproc:// address is empty")
        return address
    if rest.startswith("["):                                     # IPv6: [host]:port
        host, bracket, tail = rest[1:].partition("]")
        if not bracket:
            refuse("the IPv6 host has no closing bracket")
        colon, port = tail[:1] == ":", tail[1:]
    else:
        host, colon_text, port = rest.rpartition(":")
        colon = bool(colon_text)
        if colon and ":" in host:
            refuse("an IPv6 host needs brackets, such as tcp://[::1]:8786")
    if not colon:
        refuse("the port is missing")
    if not host:
        refuse("the host is empty")
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        refuse(f"the port {port!r} is not an integer 1-65535")
    return address


@contextlib.contextmanager
def cluster_executor(address: str | None = None) -> Iterator[Executor | None]:
    """A ``concurrent.futures.Executor`` on the Dask scheduler at ``address`` (default: the environment's
    ``FEDLIB_DASK_SCHEDULER``), closed on exit; ``None`` when neither names one (run locally). The address is
    checked whole (:func:`check_scheduler_address`) before ``distributed`` is imported or anything is connected to.

    Raises:
        ValueError / ParameterTypeError: ``address`` (or the variable) is set but is not a ``tcp://HOST:PORT`` /
            ``tls://HOST:PORT`` address with a non-empty host and a port 1-65535, or an ``inproc://`` address (the
            message names ``FEDLIB_DASK_SCHEDULER``). ImportError: ``distributed`` is not installed (the message
            names ``pip install -e .[dask]``).
    """
    address = os.environ.get(SCHEDULER_ENV) if address is None else address
    if address is None:
        yield None
        return
    check_scheduler_address(address)
    try:
        from distributed import Client
    except ImportError as err:                # pragma: no cover - distributed is in requirements.txt
        raise ImportError("a Dask scheduler needs the distributed package: pip install -e .[dask]") from err
    with Client(address) as client:
        yield client.get_executor()


def map_jobs(fn: Callable[..., dict], jobs: list[dict], workers: int | Executor = 1, threads: int = 1,
             desc: str = "runs", cost: Callable[[dict], float] | None = None) -> list:
    """``[fn(**job) for job in jobs]``, in ``jobs`` order, with a tqdm bar.

    Args:
        fn: a module-level function (workers import it by name). jobs: keyword arguments of each call (picklable;
            pass dataset names, not tensors). workers: 1 = this process (on ``threads`` torch threads for the
            jobs, as a pool worker is, then the caller's count again);
            > 1 = that many spawned worker processes; or any ``concurrent.futures.Executor`` (e.g. Dask's
            ``Client(...).get_executor()``), whose workers must share the result store's folder. With
            ``FEDLIB_DASK_SCHEDULER`` set in the environment every call goes to that scheduler
            (:func:`cluster_executor`) whatever ``workers`` is. threads: torch threads per worker (>= 1; an
            Executor's workers are set per job).
        cost: ``cost(job)`` -> a relative running time; a pool starts the costliest jobs first (longest
            processing time first: the last wave leaves fewer workers idle). Results keep ``jobs`` order.

    Raises:
        ValueError / ParameterTypeError: workers not an integer >= 1 or an Executor, threads not an integer >= 1,
        ``jobs`` not a non-empty list of dicts, ``fn`` / ``cost`` not callable, a malformed
        ``FEDLIB_DASK_SCHEDULER`` (:func:`check_scheduler_address`: scheme, non-empty host, port 1-65535; checked
        before any job runs). Whatever a job raises.
    """
    check_callable("fn", fn, allow_none=False)
    if not isinstance(workers, Executor):
        workers = check_int("workers", workers, 1, extra=" or a concurrent.futures.Executor")
    threads = check_int("threads", threads, 1)
    jobs = check_list("jobs", jobs, lambda k, v: check_instance(k, v, dict, "a dict of keyword arguments"))
    check_str("desc", desc, nonempty=False)
    check_callable("cost", cost)
    start = list(range(len(jobs)))
    if cost is not None:
        start.sort(key=lambda i: -cost(jobs[i]))     # stable: equal costs keep their order
    if isinstance(workers, Executor):
        return _run_pool(workers, fn, jobs, start, threads, desc)
    with cluster_executor() as cluster:
        if cluster is not None:
            return _run_pool(cluster, fn, jobs, start, threads, desc)
    if workers == 1 or len(jobs) <= 1:
        with torch_threads(threads):        # as a worker would: the number of workers never changes a record
            return [fn(**job) for job in tqdm(jobs, desc=desc)]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx, initializer=_init_worker,
                             initargs=(threads,)) as pool:
        return _run_pool(pool, fn, jobs, start, None, desc)


def _run_pool(pool: Executor, fn: Callable[..., dict], jobs: list[dict], start: list[int], threads: int | None,
              desc: str) -> list:
    """Submit every job in ``start`` order; a job whose run another worker is computing (:class:`RunInProgress`)
    is submitted again after the others, to wait for that record. ``threads``: set per job (None: the pool's
    initializer set them)."""
    out: list = [None] * len(jobs)
    pending = {pool.submit(_call, fn, jobs[i], True, threads): i for i in start}
    bar = tqdm(total=len(jobs), desc=desc)
    while pending:
        fut = next(as_completed(pending))
        i = pending.pop(fut)
        try:
            out[i] = fut.result()
        except RunInProgress:           # another worker trains this run: retry after the queued jobs
            pending[pool.submit(_call, fn, jobs[i], False, threads)] = i
            continue
        bar.update()
    bar.close()
    return out


def get_or_run_all(runs: list[tuple], workers: int | Executor = 1, threads: int = 1, desc: str = "runs") -> list[dict]:
    """``[store.get_or_run(config, run) for store, config, run in runs]``: each record read from its store, or
    computed by ``run()`` (a ``functools.partial`` of a method-layer record function, e.g.
    ``partial(fedlib.dtfl.run.train_record, cfg, data, cuts, ...)``) and stored first. The records already stored
    are read here; the others are computed by :func:`map_jobs` (``workers``, ``threads``: as there), so that a
    redraw from the store starts no worker. Returns the records in ``runs`` order.

    Raises:
        ValueError / ParameterTypeError: ``runs`` not a non-empty list of ``(store, config, run)`` triples; as
            :func:`map_jobs`. :class:`fedlib.lab.store.CacheMiss` under ``FEDLIB_CACHE_ONLY=1`` for a record not
            stored. Whatever a run raises.
    """
    runs = check_list("runs", runs, lambda k, v: check_instance(k, v, tuple, "a (store, config, run) triple"))
    out = [store.get_or_run(config, run) if store.has(config) else None for store, config, run in runs]
    missing = [i for i, rec in enumerate(out) if rec is None]
    if missing:
        jobs = [dict(store=runs[i][0], config=runs[i][1], run=runs[i][2]) for i in missing]
        for i, rec in zip(missing, map_jobs(_get_or_run, jobs, workers, threads, desc)):
            out[i] = rec
    return out


def _get_or_run(store, config: dict, run: Callable[[], dict]) -> dict:
    return store.get_or_run(config, run)
