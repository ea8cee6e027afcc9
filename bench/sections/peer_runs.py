"""The peers at work: their engines in worker processes, and `promptfoo eval` on a config.

The peers themselves are installed by bench/peers.py; the workers' own code is
bench/peer_runsight.py and bench/peer_promptfoo.mjs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import engine_workload as ew
import peers as peer_install
import workload as wl
from harness import ROOT, Run, run_measured


class Worker:
    """A peer's engine in its own process, judging one chunk per `PASS k` (peer_*.py/.mjs)."""

    def __init__(self, command: list[str], env: dict[str, str], verdicts: Path, log: Path):
        self.verdicts_path = verdicts
        self._log = log.open("w")
        self.process = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        self.slots: list[tuple[float, int]] = []

    def ready(self) -> dict[str, Any]:
        """Wait for the untimed pass; its verdicts."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "READY":
            self.close()
            raise RuntimeError(f"peer worker failed: see {self._log.name}")
        found: dict[str, Any] = json.loads(self.verdicts_path.read_text())
        return found

    def timed(self, chunk: int) -> None:
        """One timed chunk."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"PASS {chunk}\n")
        self.process.stdin.flush()
        seconds, responses = self.process.stdout.readline().split()
        self.slots.append((float(seconds), int(responses)))

    def close(self) -> None:
        """QUIT, and wait."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.write("QUIT\n")
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def start_workers(run: Run, outputs: list[str], chunks: int) -> dict[str, Worker]:
    """The installed peers' engine workers, loaded and past their untimed pass."""
    workers: dict[str, Worker] = {}
    if (runsight := run.peer("runsight")) is not None:
        assertions = [dict(entry) for entry in ew.TYPED]
        for entry in assertions:
            if entry["type"] == "is-json":
                entry.setdefault("value", None)  # see wl.RUNSIGHT_SUBSTITUTIONS
        spec = run.work / "runsight_in.json"
        spec.write_text(
            json.dumps({"assertions": assertions, "outputs": outputs, "chunks": chunks})
        )
        verdicts = run.work / "runsight_verdicts.json"
        command = [
            str(runsight.executable),
            str(ROOT / "peer_runsight.py"),
            str(spec),
            str(verdicts),
        ]
        workers["runsight"] = Worker(
            command, peer_install.PEER_ENV, verdicts, run.work / "runsight.log"
        )
    if (promptfoo := run.peer("promptfoo")) is not None:
        asserts = [wl.promptfoo_assert(entry) for entry in ew.TYPED]
        spec = run.work / "promptfoo_in.json"
        spec.write_text(json.dumps({"assertions": asserts, "outputs": outputs, "chunks": chunks}))
        verdicts = run.work / "promptfoo_verdicts.json"
        command = [
            "node",
            str(ROOT / "peer_promptfoo.mjs"),
            str(promptfoo.package_dir),
            str(spec),
            str(verdicts),
        ]
        env = {**peer_install.PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(run.work / "pfhome")}
        workers["promptfoo"] = Worker(command, env, verdicts, run.work / "promptfoo.log")
    return workers


def promptfoo_eval(
    peer: peer_install.Peer, config: dict[str, Any], work: Path, name: str
) -> tuple[dict[str, Any], Path]:
    """`promptfoo eval` on a generated config: offline, a fresh config directory and database."""
    directory = work / name
    directory.mkdir()
    config_path = directory / "promptfooconfig.yaml"
    wl.write_promptfoo_config(config_path, config)
    out = directory / "out.json"
    env = {**peer_install.PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(directory / "home")}
    command = [
        str(peer.executable), "eval", "-c", str(config_path),
        "--no-cache", "--no-progress-bar", "-o", str(out),
    ]  # fmt: skip
    figures = run_measured(command, cwd=directory, log_file=directory / "eval.log", env=env)
    # promptfoo exits 100 when a test failed, as assertly exits 1: both are a finished run.
    figures["finished"] = out.exists() and figures["exit_code"] in (0, 100)
    return figures, out
