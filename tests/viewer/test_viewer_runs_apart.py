"""Runs you can tell apart in ``assertly view`` (issue 34): names, files, targets, commits,
the blessed baseline, "vs previous" by the same files and targets, an export with no path of
the machine it was made on. Every run here is stored by the real runner (a real ``cmd:`` agent).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from viewer_support import serving

from assertly.store import RunQueries, RunStore
from assertly.viewer import Links, Site

AGENT = """\
import json, os, sys
request = json.load(sys.stdin)
text = str(request.get("input") if isinstance(request, dict) else request)
# "where": the agent answers with the directory it runs in (an absolute path of the machine).
print(os.getcwd() if text == "where" else ("nope" if sys.argv[1] == "v2" else "echo " + text))
"""
HOSTILE_NAME = '<script>window.__pwned = 1</script><img src=x onerror="alert(1)">'


def _python() -> str:
    return shlex.quote(sys.executable)


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "assertly.yaml").write_text(
        json.dumps({"agents": {"echo": f"cmd:{_python()} agent.py v1"}}), encoding="utf-8"
    )
    for name in ("a", "b"):
        tests = [
            {"id": f"{name}1", "input": "hello", "expect": {"contains": "hello"}},
            {"id": f"{name}2", "input": "where", "expect": {"contains": "/"}},
        ]
        (root / f"{name}.tests.yaml").write_text(
            json.dumps({"agent": "echo", "test_suites": {name: {"tests": tests}}}),
            encoding="utf-8",
        )
    return root


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def _run(root: Path, store: str, test_file: str, *extra: str) -> str:
    """``assertly run`` in ``root`` into ``store``; the run's id."""
    report = root / "report.json"
    targets = extra if "--target" in extra else (*extra, "--target", f"cmd:{_python()} agent.py v1")
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "run", test_file, *targets, "--store", store,
         "--output", str(report)],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "ASSERTLY_RUN_NAME": ""},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return str(json.loads(report.read_text(encoding="utf-8"))["run_id"])


MATRIX = (
    "--target", f"base=cmd:{_python()} agent.py v1",
    "--target", f"cand=cmd:{_python()} agent.py v2",
)  # fmt: skip


def _runs(root: Path, store: str) -> dict[str, str]:
    """Interleaved: A, B, A again (named), A as a matrix (same file, other targets), then B."""
    return {
        "a1": _run(root, store, "a.tests.yaml"),
        "b1": _run(root, store, "b.tests.yaml"),
        "a2": _run(root, store, "a.tests.yaml", "--name", HOSTILE_NAME,
                   "--target", f"cmd:{_python()} agent.py v1"),
        "mx": _run(root, store, "a.tests.yaml", *MATRIX),
        "b2": _run(root, store, "b.tests.yaml"),
    }  # fmt: skip


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = _project(tmp_path_factory.mktemp("apart") / "project")
    _git(root, "init", "-q", "-b", "feature/x")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "tests")
    store = root / ".assertly" / "runs.sqlite"
    runs = _runs(root, str(store))
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "bless", runs["a1"], "--store", str(store)],
        cwd=root, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {"root": root, "store": store, "runs": runs, "head": _git(root, "rev-parse", "HEAD")}


def test_vs_previous_is_the_previous_run_of_the_same_files_and_targets(
    stored: dict[str, Any],
) -> None:
    runs = stored["runs"]
    queries = RunQueries(stored["store"])
    # Not merely the run before: b1 came between the two runs of a.tests.yaml.
    assert queries.previous(runs["a2"]) == runs["a1"]
    assert queries.previous(runs["b2"]) == runs["b1"]
    assert queries.previous(runs["b1"]) is None  # the first run of b.tests.yaml
    assert queries.previous(runs["a1"]) is None
    # The same file under other targets (a matrix run) is not the same run.
    assert queries.previous(runs["mx"]) is None
    order = [runs[n] for n in ("b2", "mx", "a2", "b1", "a1")]
    assert queries.previous_of(order) == {
        runs["b2"]: runs["b1"],
        runs["mx"]: None,
        runs["a2"]: runs["a1"],
        runs["b1"]: None,
        runs["a1"]: None,
    }


def test_api_runs_tells_each_run_apart(stored: dict[str, Any]) -> None:
    runs, head = stored["runs"], stored["head"]
    with serving(stored["store"]) as url:
        import urllib.request

        with urllib.request.urlopen(f"{url}/api/runs", timeout=10) as response:
            data = json.loads(response.read())
    by_id = {run["run_id"]: run for run in data["runs"]}
    a2 = by_id[runs["a2"]]
    assert a2["name"] == HOSTILE_NAME and by_id[runs["a1"]]["name"] is None
    assert a2["files"] == ["a.tests.yaml"] and by_id[runs["b1"]]["files"] == ["b.tests.yaml"]
    assert a2["targets"] == [] and by_id[runs["mx"]]["targets"] == ["base", "cand"]
    assert a2["commit"] == head and a2["commit_short"] == head[:7]
    assert a2["branch"] == "feature/x" and a2["dirty"] is False
    assert isinstance(a2["host"], str) and a2["host"]
    assert [run["blessed"] for run in data["runs"]].count(True) == 1
    assert by_id[runs["a1"]]["blessed"] is True
    assert a2["previous"] == runs["a1"] and by_id[runs["b2"]]["previous"] == runs["b1"]
    assert by_id[runs["mx"]]["previous"] is None


def test_the_runs_page_shows_names_first_and_the_baseline(stored: dict[str, Any]) -> None:
    runs = stored["runs"]
    html = Site(RunQueries(stored["store"]), background=False).runs_page({}, Links(), "s")
    rows = dict(re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', html, re.S))
    named = rows[runs["a2"]]
    # The name, escaped (inert), before the id.
    assert "<script>" not in html and "onerror=" not in html.replace("onerror=&#34;", "")
    shown = named.index("&lt;script&gt;window.__pwned = 1&lt;/script&gt;")
    assert shown < named.index(runs["a2"] + "</code>")
    assert f'href="/compare?base={runs["a1"]}&amp;candidate={runs["a2"]}"' in named
    assert "blessed" in rows[runs["a1"]] and "blessed" not in named
    assert "feature/x" in named and stored["head"][:7] in named and "a.tests.yaml" in named
    assert "vs previous" not in rows[runs["mx"]]  # no earlier run of these targets
    page = Site(RunQueries(stored["store"])).run_page(runs["a2"], {}, Links())
    assert f"/compare?base={runs['a1']}&amp;candidate={runs['a2']}" in page
    assert "<script>window" not in page and "&lt;script&gt;" in page
    assert 'id="no-previous"' in Site(RunQueries(stored["store"])).run_page(runs["mx"], {}, Links())


def test_a_run_stored_before_runs_kept_their_files_compares_with_the_run_before(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p")
    store = tmp_path / "runs.sqlite"
    first = _run(root, str(store), "b.tests.yaml")
    writer = RunStore(store)
    writer.start_run("old", "2999-01-01T00:00:00Z", {"pass_threshold": "all"})  # no files
    writer.finish_run("old", "2999-01-01T00:00:01Z", 1.0)
    writer.close()
    queries = RunQueries(store)
    assert queries.previous("old") == first
    runs = json.loads(Site(queries, background=False).runs_json({}))["runs"]
    assert runs[0]["run_id"] == "old" and runs[0]["files"] is None
    assert runs[0]["previous"] == first and runs[0]["commit"] is None


def _absolute_paths_run(tmp_path: Path) -> tuple[Path, Path]:
    """A project run with absolute paths everywhere: the file, the store, the agent's cwd."""
    root = _project(tmp_path / "project")
    store = root / ".assertly" / "runs.sqlite"
    _run(root, str(store), str(root / "a.tests.yaml"))
    _run(root, str(store), str(root / "a.tests.yaml"), "--name", f"from {root}")
    return root, store


def test_the_export_holds_no_absolute_path_of_the_machine(tmp_path: Path) -> None:
    root, store = _absolute_paths_run(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "export"
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "view", "--store", str(store), "--export", str(out)],
        cwd=elsewhere, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The stored run does hold them (so the export had something to take out).
    queries = RunQueries(store)
    options = queries.run_options(queries.resolve("last"))
    assert options["files"] == [str(root / "a.tests.yaml")]
    forbidden = {str(store.parent), str(root), str(tmp_path), str(Path.home()) + os.sep}
    forbidden.add(tempfile.gettempdir().rstrip(os.sep) + os.sep)
    files = [path for path in out.rglob("*") if path.is_file()]
    assert len(files) > 8
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        for prefix in forbidden:
            assert prefix not in text and prefix.lower() not in text.lower(), (path, prefix)
    # Made relative, not dropped: the files, keys, the store and the agent's answer.
    runs = json.loads((out / "api/runs.json").read_text())["runs"]
    assert runs[0]["files"] == ["a.tests.yaml"] and runs[0]["name"] == "from ."
    report = json.loads((out / f"api/runs/{runs[0]['run_id']}.json").read_text())
    assert [test["key"] for test in report["tests"]] == [
        "a.tests.yaml::a::a1",
        "a.tests.yaml::a::a2",
    ]
    assert report["tests"][1]["trials"][0]["output"] == ".\n"
    assert "store <code>.assertly/runs.sqlite</code>" in (out / "index.html").read_text()


def test_the_path_scrubber_keeps_other_paths_and_spellings_apart() -> None:
    from assertly.viewer._export import PathScrubber

    scrub = PathScrubber({"/w/proj": "", "/home/me": "~"})
    assert scrub("/w/proj/a.yaml::s::t") == "a.yaml::s::t"
    assert scrub("cwd is /w/proj.") == "cwd is .."
    assert scrub("/w/proj.old/x /w/proj-2 /w/proj") == "/w/proj.old/x /w/proj-2 ."
    assert scrub("/w/project2/a.yaml /home/me/x /home/meg") == "/w/project2/a.yaml ~/x /home/meg"
    assert scrub("%2Fw%2Fproj%2Fa.yaml") == "a.yaml"
    odd = PathScrubber({'/w/"q&a"': ""})
    assert odd('"/w/\\"q&a\\"/t.yaml"') == '"t.yaml"'  # as JSON writes it
    assert odd("/w/&#34;q&amp;a&#34;/t.yaml") == "t.yaml"  # as HTML escapes it


def test_previous_reads_the_same_over_postgres(tmp_path: Path, postgres_database: str) -> None:
    root = _project(tmp_path / "p")
    local = tmp_path / "runs.sqlite"
    names = ("a1", "b1", "a2", "mx", "b2")
    here = _runs(root, str(local))
    there = _runs(root, postgres_database)
    sqlite, shared = RunQueries(local), RunQueries(postgres_database)
    for name in names:
        before = sqlite.previous(here[name])
        expected = None if before is None else names[list(here.values()).index(before)]
        found = shared.previous(there[name])
        assert (None if found is None else names[list(there.values()).index(found)]) == expected
    assert shared.previous(there["a2"]) == there["a1"]
    assert shared.previous(there["mx"]) is None
    info = Site(shared, background=False).runs_data({})["runs"]
    assert {run["run_id"]: run["files"] for run in info}[there["b2"]] == ["b.tests.yaml"]
