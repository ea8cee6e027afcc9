"""``assertly view --export DIR``: the viewer's pages and JSON as static files.

For CI artifacts: any static file server (or a browser opening the files) shows the runs list,
each run (its tests in pages of `STATIC_PAGE`, a matrix run's rows with its matrix; filtered in
the page by ``viewer.js`` from the URL's parameters), and each run compared with the one
before it. The JSON sits beside them:
``api/runs.json``, ``api/runs/RUN.json`` (every test), ``api/diff/BASE..CANDIDATE.json``.

An export leaves the machine (a CI artifact), so it holds no absolute path of it: every text
written has the project's directory (the one holding the store's ``.assertly``, else the
store's own), the current directory and the directories of the runs' absolute files and
config made relative, and the home directory written ``~`` (`PathScrubber`) — test keys,
files, the store's name, messages and outputs alike.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import markupsafe
import orjson

from ._pages import STATIC_PAGE, Links, file_name
from ._site import Site

__all__ = ["PathScrubber", "export_site"]

_LINKS = Links(static=True)
EXPORTED_RUNS = 500  # the newest runs an export holds (naming runs picks others)
# An absolute path in a word of a target spec: at its start, or after '=' or ':' (py:/a/m.py).
_ABSOLUTE = re.compile(r"(?:^|[=:])(/(?!/)[^:]+)")


def export_site(
    site: Site, directory: str | Path, run_names: Sequence[str], store_label: str
) -> list[Path]:
    """Write the pages and JSON of ``run_names`` (every run when empty) under ``directory``.

    Returns:
        The files written.
    """
    root = Path(directory)
    written: list[Path] = []
    only = None
    if run_names:
        only = frozenset(site.queries.resolve(name) for name in run_names)
    everything = {"limit": str(EXPORTED_RUNS)}
    listed = site.runs_data(everything, only)["runs"]
    scrub = PathScrubber.of(site, [run["run_id"] for run in listed])

    def write(relative: str, data: bytes | str, *, ours: bool = False) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not ours:  # the package's own files hold no path of this machine
            data = scrub(
                data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else data
            )
        path.write_bytes(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        written.append(path)

    for name in ("viewer.css", "viewer.js"):
        data = resources.files("assertly.viewer").joinpath("static", name).read_bytes()
        write(f"static/{name}", data, ours=True)
    write("index.html", site.runs_page(everything, _LINKS, store_label, only))
    write("api/runs.json", site.runs_json(everything, only))
    for run in listed:
        run_id = run["run_id"]
        stem = file_name(run_id)
        # A matrix run's pages count its rows (tests across targets), each with its cells.
        for offset in _offsets(site.run_size(run_id)):
            query = {"offset": str(offset), "limit": str(STATIC_PAGE)}
            page = offset // STATIC_PAGE + 1
            suffix = "" if page == 1 else f"-p{page}"
            page_html = site.run_page(run_id, query, _LINKS, run.get("previous"))
            write(f"run-{stem}{suffix}.html", page_html)
        write(f"api/runs/{stem}.json", _whole_run_json(site, run_id, run["tests"]))
        previous = run.get("previous")
        if previous:
            query = {"base": previous, "candidate": run_id}
            api = f"api/diff/{file_name(previous)}..{stem}.json"
            compared = site.compare_page(query, _LINKS, api)
            write(f"compare-{file_name(previous)}-{stem}.html", compared)
            write(api, site.diff_json(query))
    return written


def _offsets(tests: int) -> Iterable[int]:
    return range(0, max(tests, 1), STATIC_PAGE)


def _whole_run_json(site: Site, run_id: str, tests: int) -> bytes:
    """The run in the JSON report's shape with every test (one page as big as the run)."""
    from ..reports._json import render_json
    from ..store import build_run, open_store

    del tests
    with open_store(site.queries.store_path, must_exist=True, read_only=True) as store:
        return render_json(build_run(store, run_id))


class PathScrubber:
    """Makes the absolute paths of this machine in a text relative (an export's every file).

    Args:
        roots: Each directory to take out, with what it becomes: ``""`` (paths under it
            become relative to it; the directory alone becomes ``.``) or ``"~"`` (home).
    """

    def __init__(self, roots: dict[str, str]) -> None:
        self.forms: dict[str, tuple[str, str]] = {}  # a spelling of a root: (root, slash)
        for directory in roots:
            # As the text may hold it: raw, in a JSON string, escaped in HTML, lowercased
            # (a page's search text), in a URL; followed by its separator as spelled there.
            json_form = orjson.dumps(directory).decode()[1:-1]
            html_form = str(markupsafe.escape(directory))
            for form, slash in (
                (directory, "/"),
                (json_form, "/"),
                (html_form, "/"),
                (directory.lower(), "/"),
                (html_form.lower(), "/"),
                (quote(directory, safe=""), "%2F"),
                (quote(directory), "/"),
            ):
                self.forms.setdefault(form, (directory, slash))
        self.roots = roots
        longest = sorted(self.forms, key=len, reverse=True)
        self._pattern = (
            re.compile(
                "(?P<root>" + "|".join(re.escape(form) for form in longest) + ")"
                # Followed by a separator, or at the end of a name: never /tmp/ab nor /tmp/a.b
                # for /tmp/a (a sentence's full stop after it is not part of the name).
                r"(?P<slash>/|%2F|(?![\w~%-]|\.[\w.~%-]))"
            )
            if longest
            else None
        )

    def __call__(self, text: str) -> str:
        """``text`` with every root taken out."""
        if self._pattern is None:
            return text
        return self._pattern.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        directory, _ = self.forms[match["root"]]
        becomes = self.roots[directory]
        if match["slash"]:
            return f"{becomes}{match['slash']}" if becomes else ""
        return becomes or "."

    @classmethod
    def of(cls, site: Site, run_ids: list[str]) -> PathScrubber:
        """The roots of an export of ``run_ids``: see the module's docstring."""
        found: dict[str, str] = {}
        home = _spellings(Path.home())
        for directory in home:
            found[directory] = "~"
        places: list[Path] = [Path.cwd()]
        if not site.queries.kind.by_url:
            places.append(_project_of(Path(site.queries.store_path).absolute()))
        by_url = site.queries.kind.by_url
        store_file = None if by_url else Path(os.path.abspath(site.queries.store_path))
        for run_id in run_ids:
            options = site.queries.run_options(run_id)
            named = [*(options.get("files") or []), *(options.get("paths") or [])]
            ran_in = _run_directory(store_file, options.get("store_path"))
            for name in [*named, options.get("config_path"), options.get("store_path")]:
                if isinstance(name, str) and os.path.isabs(name):
                    places.append(_project_of(Path(name)))
                elif isinstance(name, str) and name and ran_in is not None:
                    # red team, probe "export relative file": `run ../t.yaml` stored its
                    # problems with the absolute path of t.yaml's folder, which no root
                    # covered (the run's directory is where its relative store path starts).
                    places.append(_project_of(Path(os.path.normpath(ran_in / name))))
            # red team, probe "export agent path": an agent named by an absolute path
            # (``cmd:/srv/bots/agent v1``) leaked in assertly's own errors ("cannot start
            # '/srv/bots/agent'"): the directories of the specs' absolute paths go too.
            targets = options.get("targets")
            specs = [
                options.get("target"),
                *(targets.values() if isinstance(targets, dict) else ()),
            ]
            for spec in specs:
                for name in _absolute_paths(spec) if isinstance(spec, str) else ():
                    places.append(Path(name).parent)
        for place in places:
            for directory in _spellings(place):
                # Never "/" (every path would go) nor a directory above home.
                if len(Path(directory).parts) > 1 and not any(
                    Path(h).is_relative_to(directory) and h != directory for h in home
                ):
                    found[directory] = ""
        return cls(found)


def _absolute_paths(spec: str) -> list[str]:
    """The absolute paths a target spec names (its words as a shell splits them)."""
    try:
        words = shlex.split(spec)
    except ValueError:  # an unclosed quote: words as spaces split them
        words = spec.split()
    return [name for word in words for name in _ABSOLUTE.findall(word)]


def _run_directory(store_file: Path | None, stored: Any) -> Path | None:
    """Where a run started: the store's path without the relative store path it was given.

    None when that cannot be known (an absolute or URL store path, ``..`` in it, or a store
    that is not where the run wrote it).
    """
    if store_file is None or not isinstance(stored, str) or not stored:
        return None
    if os.path.isabs(stored) or "://" in stored:
        return None
    parts = Path(stored).parts
    if ".." in parts or len(parts) >= len(store_file.parts):
        return None
    if store_file.parts[-len(parts) :] != parts:
        return None
    return Path(*store_file.parts[: -len(parts)])


def _project_of(path: Path) -> Path:
    """What a path is made relative to: its project (above ``.assertly``), else its directory."""
    return path.parent.parent if path.parent.name == ".assertly" else path.parent


def _spellings(path: Path) -> set[str]:
    """``path`` as given and resolved (symbolic links: /tmp is /private/tmp on macOS)."""
    found = {str(path.absolute())}
    with contextlib.suppress(OSError):
        found.add(str(path.resolve()))
    return {name.rstrip("/") or "/" for name in found}
