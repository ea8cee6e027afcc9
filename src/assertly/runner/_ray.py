"""``run --backend ray``: calls and judging on a Ray cluster; the driver alone writes the store.

The driver (this process) loads and selects the tests as a local run does, writes every test's
metadata and every trial to the store, runs suite setups, skips and broken tests, and judges
what needs no call (recorded responses, a ``fixtures:`` target: nothing there to spread). Every
trial that calls an agent goes to a pool of Ray actors, one per CPU of the cluster (at most one
per ``-j``): each is an asyncio process that loads the test files, config and plugins once,
builds the targets once, and runs the trial (setup hooks, calls, judging, cleanup hooks) with
the same code a local run uses (`Runner.execute_trial`). The record comes back as data and is
stored here: the same verdicts and reports as a local run.

Compiled expectations do not pickle (closures, schema validators, RE2), so a trial is sent as
its file and key; the worker loads each file once and checks that its test has the driver's
definition digest (a file that differs on a worker is an error, never another test's verdict).

A worker that dies (a crash, the OOM killer, a lost node) is restarted by Ray; each trial it
was running is sent once more, alone on its worker (no other trial is placed there meanwhile),
and a trial whose worker dies again is stored as ``error`` with the reason: a death beside a
trial never makes it an error. A ``py:`` agent runs in processes of its own
(`PythonTarget`), so an agent that ends its process costs its own trial and no worker. Ctrl-C
cancels the trials in flight on the workers (their agent processes are stopped there), then
the run stops as a local one does.

Ray is imported only here, and this module only when ``--backend ray`` is given.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any, cast

import ray
import ray.exceptions

from .._exceptions import ConfigError, Problem
from .._records import TrialRecord
from ..loading import ConfigModel, TestCase, load_config, load_config_plugins, load_paths
from ..store import RunStore
from ._model_judge import judge_counts
from ._options import RunOptions
from ._run import Listener, Runner
from ._simulator import add_simulator_spend

__all__ = ["RayRunner", "RayWorker"]

# Times a trial is sent to a worker: once, and once more if that worker died under it.
_ATTEMPTS = 2
# How long Ctrl-C waits for a cancelled trial's worker to stop the agent it was calling.
_CANCEL_WAIT_S = 5.0
# How long the run waits for its workers to start (each waits for a free CPU).
_START_WAIT_S = 120.0
# How long a trial waits for a worker that died to be restarted by Ray.
_RESTART_WAIT_S = 120.0
# How often a trial waiting for a worker to itself looks again.
_POLL_S = 0.02
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # as targets/_http.py reads them
_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"


# Ray puts its sockets in its session directory, and a Unix socket's path may not pass 107
# bytes: under a deep TMPDIR (a CI job's, pytest's) Ray's default would not start.
_SOCKET_PATH_ROOM = 107 - len("/session_2026-01-01_00-00-00_000000_0000000/sockets/plasma_store")


def _short_temp_dir() -> str:
    """Ray's temporary directory: the default under TMPDIR, or one in /tmp when that is deep."""
    default = os.path.join(tempfile.gettempdir(), "ray")
    if len(default) <= _SOCKET_PATH_ROOM:
        return default
    return tempfile.mkdtemp(prefix="ray-", dir="/tmp")


class RayRunner(Runner):
    """A `Runner` that runs every trial calling an agent on a Ray cluster."""

    def __init__(
        self,
        options: RunOptions,
        config: ConfigModel,
        store: RunStore,
        secrets: set[str],
        listener: Listener | None = None,
    ) -> None:
        super().__init__(options, config, store, secrets, listener)
        self._workers: list[Any] = []  # Ray actor handles
        self._load: list[int] = []  # trials in flight on each worker
        self._started_ray = False
        self._restarting: set[int] = set()  # workers that died, until they answer again
        self._alone: set[int] = set()  # workers reserved for a retried trial, running alone
        self._connect()  # before the run is stored: a cluster that cannot be used writes nothing

    # -- the cluster -------------------------------------------------------------------------
    async def _start_targets(self, agents: Iterable[str]) -> None:
        """Start the workers on the cluster, before the run's clock starts."""
        # The cluster's CPUs, not its free ones: a worker waits for a CPU that is busy (the
        # workers of a run that just ended free theirs a moment later), up to `_START_WAIT_S`.
        cpus = int(ray.cluster_resources().get("CPU", 0))  # type: ignore[no-untyped-call]
        if cpus < 1:
            raise ConfigError(
                [Problem("--backend ray", "the Ray cluster has no CPU for assertly's workers")]
            )
        count = min(cpus, self.concurrency)
        share = max(1, math.ceil(self.concurrency / count))
        rate = self._limiter.interval and 1.0 / self._limiter.interval
        options = _worker_options(self.options, share, rate / count if rate else None)
        actor = ray.remote(RayWorker).options(  # type: ignore[attr-defined]
            num_cpus=1,
            max_restarts=-1,  # a worker that dies comes back; its trials are sent once more
            max_task_retries=0,  # counted here, so a trial that kills its worker ends as error
            max_concurrency=self.concurrency,
            scheduling_strategy="SPREAD",
        )
        config_path = _relative(self.config.path) if self.config.path else None
        env = _forwarded_env(self.config)
        self._workers = [actor.remote(os.getcwd(), config_path, options, env) for _ in range(count)]
        self._load = [0] * count
        # Every worker has loaded the config and plugins (or said why it cannot) before the
        # run starts: a broken worker set-up is one usage error, not an error per trial.
        waiting = asyncio.gather(*(worker.ready.remote() for worker in self._workers))
        try:
            problems = await asyncio.wait_for(waiting, _START_WAIT_S)
        except ray.exceptions.RayError as error:  # e.g. assertly cannot be imported there
            raise ConfigError(
                [Problem("--backend ray", f"a Ray worker could not start: {_first_line(error)}")]
            ) from None
        except TimeoutError:
            raise ConfigError(
                [
                    Problem(
                        "--backend ray",
                        f"the Ray cluster did not start {count} worker(s) (1 CPU each) within "
                        f"{_START_WAIT_S:g} s: are its CPUs busy? (-j caps the workers)",
                    )
                ]
            ) from None
        for problem in problems:
            if problem is not None:
                raise ConfigError([Problem("--backend ray", f"a Ray worker cannot run: {problem}")])

    def _connect(self) -> None:
        if ray.is_initialized():  # a Ray program (or a test) that already joined a cluster
            return
        address = self.options.ray_address
        settings: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        if address is None:
            # A cluster of this machine only, for this run: no dashboard, loopback only; Ray's
            # notice about its token authentication is for clusters others can reach.
            settings["_node_ip_address"] = "127.0.0.1"
            logging.getLogger(_AUTH_LOGGER).setLevel(logging.ERROR)
            settings["_temp_dir"] = _short_temp_dir()
        # ray.init sets a SIGTERM handler that exits at once; the run's own (`until_sigterm`)
        # cancels the trials in flight first, here and on the workers, so it is put back.
        sigterm = signal.getsignal(signal.SIGTERM)
        try:
            ray.init(address=address, **settings)
        except (ConnectionError, RuntimeError, ValueError) as error:
            where = f"at {address!r}" if address else "on this machine"
            hint = ""
            if address and address.startswith("ray://"):
                hint = (
                    " (a cluster with token authentication also needs RAY_AUTH_MODE=token "
                    "and its token on this machine: see Ray's documentation)"
                )
            raise ConfigError(
                [Problem("--ray-address", f"cannot use a Ray cluster {where}: {error}{hint}")]
            ) from None
        finally:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, sigterm)
        self._started_ray = True

    async def _alive(self, index: int) -> None:
        """Return once worker ``index`` answers (at once unless it died and is restarting).

        Raises:
            ray.exceptions.RayActorError: It did not come back within `_RESTART_WAIT_S`.
        """
        if index not in self._restarting:
            return
        deadline = time.monotonic() + _RESTART_WAIT_S
        while True:
            try:
                await self._workers[index].ready.remote()
            except ray.exceptions.RayActorError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
            else:
                self._restarting.discard(index)
                return

    async def _pick(self, *, alone: bool) -> int:
        """A worker for a trial, counted as busy with it.

        The least busy worker not reserved for a retry, preferring one that is not being
        restarted. ``alone``: a worker reserved for this trial (no other trial is placed on
        it until the trial ends), once the trials already there have ended.
        """
        while True:
            free = [i for i in range(len(self._load)) if i not in self._alone]
            if free:
                break
            await asyncio.sleep(_POLL_S)  # every worker runs a retried trial alone
        index = min(free, key=lambda i: (i in self._restarting, self._load[i]))
        if alone:
            self._alone.add(index)
            try:
                while self._load[index] > 0:
                    await asyncio.sleep(_POLL_S)
            except asyncio.CancelledError:
                self._alone.discard(index)
                raise
        self._load[index] += 1
        return index

    async def close(self) -> None:
        """Stop the workers (and the local cluster this run started), then what the base has."""
        for worker in self._workers:
            ray.kill(worker)
        self._workers = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
        await super().close()

    # -- one trial ---------------------------------------------------------------------------
    def _remote(self, test: TestCase) -> bool:
        """Whether ``test`` calls an agent (else it is judged here, as in a local run)."""
        if test.problems or test.recorded:
            return False
        return self.calls(test.agent, test.target)

    async def execute_trial(self, test: TestCase, trial: int) -> TrialRecord:
        """Run the trial on a worker (retried once if the worker dies), or here if no call."""
        if not self._remote(test):
            return await super().execute_trial(test, trial)
        died = ""
        for attempt in range(_ATTEMPTS):
            # A retried trial runs alone: a second death is then its own, never a neighbour's.
            index = await self._pick(alone=attempt > 0)
            ref = None
            try:
                await self._alive(index)
                worker = self._workers[index]
                ref = worker.trial.remote(
                    _source(test), test.base_key, test.definition, trial, test.target
                )
                data, secrets, spend = await ref
            except asyncio.CancelledError:
                # Ctrl-C: stop the call on the worker too, and wait (a little) until it has
                # stopped, so its agent process is ended there before the workers are.
                if ref is not None:
                    ray.cancel(ref)
                    with suppress(Exception, asyncio.CancelledError):
                        await asyncio.wait_for(_settled(ref), _CANCEL_WAIT_S)
                raise
            except ray.exceptions.RayActorError as error:
                died = _first_line(error)
                self._restarting.add(index)  # Ray restarts it; wait for that before using it
                continue
            except ray.exceptions.RayError as error:
                message = f"internal error on the Ray worker: {_first_line(error)}"
                return TrialRecord(test.key, trial, "error", 0.0, error=message)
            finally:
                self._load[index] -= 1
                if attempt > 0:
                    self._alone.discard(index)
            self.secrets.update(secrets)  # the store redacts what the worker's targets hold
            self.model_judge.add_spend(spend)  # stored with the run's spend when it ends
            add_simulator_spend(self, spend)  # the simulated user's, apart
            return TrialRecord.from_dict(data)
        message = (
            f"the Ray worker running this trial died, and so did the one it was retried on "
            f"with no other trial beside it (this trial's agent or assertions crash or exhaust "
            f"the worker): {died}"
        )
        return TrialRecord(test.key, trial, "error", 0.0, error=message)


def _forwarded_env(config: ConfigModel) -> dict[str, str]:
    """The driver's environment variables the config's agents read, for the workers.

    A worker's environment is its node's (on a local cluster that a Ray program started
    earlier, that program's at the time), so what the config names is taken from here, where
    the user set it: ``${NAME}`` in an HTTP agent's ``headers`` or a command's ``env``, and a
    command's ``pass_env``. Sent as an argument, not a Ray runtime_env (which Ray shows).
    """
    names: set[str] = set()
    for spec in config.agents.values():
        for mapping in (getattr(spec, "headers", None), getattr(spec, "env", None)):
            for value in (mapping or {}).values():
                names.update(_VARIABLE.findall(str(value)))
        names.update(getattr(spec, "pass_env", None) or ())
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def _source(test: TestCase) -> str:
    """The test file that defines ``test`` (for a dataset's case, not the dataset's file)."""
    return test.defined_in


async def _settled(ref: Any) -> None:
    """Wait until a remote trial has ended, however it ended."""
    with suppress(Exception):
        await ref


def _relative(path: Path) -> str:
    """``path`` relative to the working directory when inside it.

    What a node that has the project elsewhere (a Ray job's ``--working-dir``) finds too.
    """
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _first_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text[:300] + ("…" if len(text) > 300 else "")


def _worker_options(options: RunOptions, concurrency: int, rate: float | None) -> RunOptions:
    """The options a worker runs with: its share of ``-j`` and of ``--rate-limit``."""
    return RunOptions(
        paths=options.paths,
        target=options.target,
        targets=options.targets,
        concurrency=concurrency,
        trials=options.trials,
        pass_threshold=options.pass_threshold,
        now=options.now,
        facts=options.facts,
        timeout_s=options.timeout_s,
        rate_limit=rate,
        config_path=options.config_path,
    )


class RayWorker:
    """What runs in each Ray actor process: the test files and targets, loaded once.

    Args:
        cwd: The driver's working directory; the worker works there when its machine has it
            (a local cluster, a shared file system), else in its own (a Ray job's
            ``--working-dir``, which Ray copies to every node).
        config_path: The driver's config file, or None when it found none.
        options: The run's options, with this worker's share of ``-j`` and ``--rate-limit``.
        env: The driver's values of the environment variables the config's agents read.
    """

    def __init__(
        self, cwd: str, config_path: str | None, options: RunOptions, env: dict[str, str]
    ) -> None:
        if Path(cwd).is_dir():
            os.chdir(cwd)
        os.environ.update(env)  # what the config's agents read, as the driver has it
        self.problem: str | None = None
        self.runner: Runner | None = None
        self.files: dict[str, dict[str, TestCase]] = {}
        self.reported: dict[str, Any] = {}  # the judge's totals the driver has been sent
        try:
            config = load_config(Path(config_path) if config_path else None)
            load_config_plugins(config)
        except ConfigError as error:
            self.problem = "; ".join(str(problem) for problem in error.problems)
            return
        except Exception as error:  # a plugin that fails to import, on this node
            self.problem = f"{type(error).__name__}: {error}"
            return
        self.secrets: set[str] = set()
        # The worker runs trials only; the driver alone writes the store.
        self.runner = Runner(options, config, cast(RunStore, None), self.secrets)

    def ready(self) -> str | None:
        """Why this worker cannot run trials (its config or plugins do not load), or None."""
        return self.problem

    async def trial(
        self, file: str, key: str, definition: str, number: int, target: str | None = None
    ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """Run trial ``number`` of the test ``key`` in ``file`` (against ``target`` in a matrix).

        Returns:
            Its record, the secrets seen, and what the worker's judge spent since the last
            trial returned (calls, cached answers, tokens, cost), which the
            driver adds to the run's judge accounting.
        """
        assert self.runner is not None  # `ready` said so before any trial was sent
        test = self._test(file, key)
        if test is None or test.definition != definition:
            where = f"{key} in {os.path.abspath(file)}"
            error = (
                f"the Ray worker's copy of the test differs from the driver's ({where}): "
                "give every node of the cluster the same test files"
            )
            record = TrialRecord(key, number, "error", 0.0, error=error)
            return record.to_dict(), [], judge_counts(None)
        if target is not None:
            test = test.with_target(target)
        record = await self.runner.execute_trial(test, number)
        return record.to_dict(), sorted(self.secrets), self._new_spend()

    def _new_spend(self) -> dict[str, Any]:
        """What the worker's judge spent since the last trial returned.

        A difference of running totals (the client's own stay whole, as its budget reads
        them), taken with no await in between, so trials that judge at the same time on this
        worker's event loop are each counted once.
        """
        runner = cast(Runner, self.runner)
        now = judge_counts(runner.model_judge.client)
        simulated = judge_counts(runner._simulator.client if runner._simulator else None)
        now.update({f"simulator_{name}": count for name, count in simulated.items()})
        spend = {name: now[name] - self.reported.get(name, 0) for name in now}
        self.reported = now
        return spend

    def _test(self, file: str, key: str) -> TestCase | None:
        """The compiled test ``key`` of ``file`` (each file loaded once per worker)."""
        if file not in self.files:
            config = cast(Runner, self.runner).config
            loaded = load_paths(
                [file],
                sensitive_prefixes=config.sensitive_prefixes,
                shape=config.shape,
                project_dir=config.directory or Path.cwd(),
                judge_rules=config.judge_rules(),
            )
            tests = {test.key: test for test in loaded.tests}
            for dataset in loaded.datasets:
                tests.update((case.key, case) for case in dataset.cases())
            self.files[file] = tests
        return self.files[file].get(key)
