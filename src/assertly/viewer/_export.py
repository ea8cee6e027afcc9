"""``assertly view --export DIR``: the viewer's pages and JSON as static files.

For CI artifacts: any static file server (or a browser opening the files) shows the runs list,
each run (its tests in pages of `STATIC_PAGE`, a matrix run's rows with its matrix; filtered in
the page by ``viewer.js`` from the URL's parameters), and each run compared with the one
before it. The JSON sits beside them:
``api/runs.json``, ``api/runs/RUN.json`` (every test), ``api/diff/BASE..CANDIDATE.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from ._pages import STATIC_PAGE, Links, file_name
from ._site import Site

__all__ = ["export_site"]

_LINKS = Links(static=True)
EXPORTED_RUNS = 500  # the newest runs an export holds (naming runs picks others)


def export_site(
    site: Site, directory: str | Path, run_names: Sequence[str], store_label: str
) -> list[Path]:
    """Write the pages and JSON of ``run_names`` (every run when empty) under ``directory``.

    Returns:
        The files written.
    """
    root = Path(directory)
    written: list[Path] = []

    def write(relative: str, data: bytes | str) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        written.append(path)

    for name in ("viewer.css", "viewer.js"):
        data = resources.files("assertly.viewer").joinpath("static", name).read_bytes()
        write(f"static/{name}", data)
    only = None
    if run_names:
        only = frozenset(site.queries.resolve(name) for name in run_names)
    everything = {"limit": str(EXPORTED_RUNS)}
    listed = site.runs_data(everything, only)["runs"]
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
