"""Install the peers on demand into bench/.peers/ (gitignored), never into assertly's venv.

    python3 bench/peers.py            # install what is missing, print what is there
    python3 bench/peers.py --force    # reinstall both

* runsight-core, from PyPI, into its own virtual environment bench/.peers/runsight/: its
  distributions are downloaded first (``pip download``) so their size is known, then installed
  from them (the index is still used for build requirements of the sdists among them).
* promptfoo, from npm, into bench/.peers/promptfoo/ with a private npm cache, whose size after
  the install is the download (tarballs and registry metadata).

A peer that cannot be installed is recorded as ``not installed: <reason>``, and the benchmark
reports it so instead of leaving it out. ``BENCH_RUNSIGHT_SPEC`` / ``BENCH_PROMPTFOO_SPEC``
override what is installed (default: the newest version the registry offers this machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PEERS = ROOT / ".peers"
INSTALL_TIMEOUT_S = 900

RUNSIGHT_SPEC = os.environ.get("BENCH_RUNSIGHT_SPEC", "runsight-core")
PROMPTFOO_SPEC = os.environ.get("BENCH_PROMPTFOO_SPEC", "promptfoo")

# Offline and quiet: no telemetry, no update checks, no network fetches at import.
PEER_ENV = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    # promptfoo's per-test debug log file crashes node at exit after a few thousand tests
    # ("write after end" in its winston file transport, promptfoo 0.121.20 on Node 20).
    "PROMPTFOO_DISABLE_DEBUG_LOG": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION": "true",
    "NO_UPDATE_NOTIFIER": "1",
    # runsight-core imports litellm, which otherwise fetches a model price map from GitHub at
    # import time (three tries with back-off when there is no network).
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_TELEMETRY": "False",
}


@dataclass
class Peer:
    """What one peer's installation left: where, which version, how big, or why not."""

    name: str
    installed: bool = False
    version: str | None = None
    reason: str | None = None
    download_bytes: int | None = None
    installed_bytes: int | None = None
    install_s: float | None = None
    executable: str | None = None
    package_dir: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """One line for the table."""
        if not self.installed:
            return f"not installed: {self.reason}"
        sizes = f"download {_mib(self.download_bytes)}, on disk {_mib(self.installed_bytes)}"
        return f"{self.name} {self.version} ({sizes})"


def _mib(size: int | None) -> str:
    return "?" if size is None else f"{size / 2**20:,.0f} MiB"


def _du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).lstat().st_size
    return total


def _run(command: list[str], log: Path) -> None:
    """Run an install step; raise RuntimeError with the last meaningful line on failure."""
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        try:
            completed = subprocess.run(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
            )
        except FileNotFoundError:
            raise RuntimeError(f"{command[0]} not found") from None
        except subprocess.TimeoutExpired:
            step = " ".join(command[:3])
            raise RuntimeError(f"{step} timed out after {INSTALL_TIMEOUT_S} s") from None
    if completed.returncode != 0:
        lines = [
            line.strip()
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip() and "warn" not in line.lower()
        ]
        raise RuntimeError(f"{command[0]} exited {completed.returncode}: {lines[-1][:200]}")


def _stamp(directory: Path) -> Path:
    return directory / ".bench-peer.json"


def _load(directory: Path) -> Peer | None:
    try:
        data = json.loads(_stamp(directory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Peer(**data)


def _save(directory: Path, peer: Peer) -> Peer:
    _stamp(directory).write_text(json.dumps(asdict(peer), indent=2) + "\n", encoding="utf-8")
    return peer


def _reuse_or_clear(directory: Path, force: bool) -> Peer | None:
    """The peer installed in ``directory`` (unless ``force``), else None and an empty one."""
    if not force and (peer := _load(directory)) is not None and peer.installed:
        return peer
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return None


def _installed(directory: Path, name: str, download: Path, started: float, **found: Any) -> Peer:
    """Save a finished installation: the download's size (then the download goes), its own."""
    downloaded = _du(download)
    shutil.rmtree(download, ignore_errors=True)
    return _save(
        directory,
        Peer(
            name,
            installed=True,
            download_bytes=downloaded,
            installed_bytes=_du(directory),
            install_s=time.perf_counter() - started,
            **found,
        ),
    )


def install_runsight(force: bool = False) -> Peer:
    """runsight-core in bench/.peers/runsight (a venv of the python3 on PATH)."""
    directory = PEERS / "runsight"
    if (peer := _reuse_or_clear(directory, force)) is not None:
        return peer
    log = directory / "install.log"
    python = directory / "bin" / "python"
    wheels = directory / "wheels"
    started = time.perf_counter()
    try:
        _run([sys.executable, "-m", "venv", str(directory)], log)
        _run(
            [str(python), "-m", "pip", "download", "--quiet", "-d", str(wheels), RUNSIGHT_SPEC], log
        )
        _run(
            [str(python), "-m", "pip", "install", "--quiet", "--find-links", str(wheels),
             RUNSIGHT_SPEC],
            log,
        )  # fmt: skip
        script = "from importlib.metadata import version; print(version('runsight-core'))"
        completed = subprocess.run(
            [str(python), "-c", script], capture_output=True, text=True, check=True
        )
        version = completed.stdout.strip()
    except (RuntimeError, subprocess.CalledProcessError) as error:
        return _save(directory, Peer("runsight-core", reason=str(error)))
    return _installed(
        directory, "runsight-core", wheels, started, version=version, executable=str(python)
    )


def install_promptfoo(force: bool = False) -> Peer:
    """promptfoo in bench/.peers/promptfoo (npm --prefix), with a private cache."""
    directory = PEERS / "promptfoo"
    if (peer := _reuse_or_clear(directory, force)) is not None:
        return peer
    log = directory / "install.log"
    cache = PEERS / "npm-cache"
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    try:
        _run(
            ["npm", "install", "--prefix", str(directory), "--cache", str(cache), "--no-audit",
             "--no-fund", "--loglevel=error", PROMPTFOO_SPEC],
            log,
        )  # fmt: skip
        package_dir = directory / "node_modules" / "promptfoo"
        version = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))["version"]
        node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as error:
        return _save(directory, Peer("promptfoo", reason=str(error)))
    return _installed(
        directory,
        "promptfoo",
        cache,
        started,
        version=version,
        executable=str(directory / "node_modules" / ".bin" / "promptfoo"),
        package_dir=str(package_dir),
        extra={"node": node.stdout.strip()},
    )


def install_all(force: bool = False) -> dict[str, Peer]:
    """Both peers, installing what is missing."""
    PEERS.mkdir(parents=True, exist_ok=True)
    return {"runsight": install_runsight(force), "promptfoo": install_promptfoo(force)}


def main() -> int:
    """Install the peers and print their status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="reinstall")
    args = parser.parse_args()
    for peer in install_all(args.force).values():
        took = f" (installed in {peer.install_s:.0f} s)" if peer.install_s else ""
        print(peer.status + took)
    return 0


if __name__ == "__main__":
    sys.exit(main())
