"""The assertion registry: built-ins, suggestions, and plugins declared as entry points in the
group ``assertly.assertions``, loaded lazily the first time a name is unknown.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import assertly
from assertly import ConfigError, Outcome, Registry
from assertly.engine import REGISTRY

TYPED_BUILTINS = {
    "bleu",
    "contains",
    "contains-all",
    "contains-any",
    "contains-json",
    "cost",
    "equals",
    "icontains",
    "is-json",
    "latency",
    "levenshtein",
    "regex",
    "rouge-n",
    "starts-with",
    "word-count",
}


def test_every_seed_type_is_registered_as_a_builtin() -> None:
    names = set(REGISTRY.names("typed"))
    assert names >= TYPED_BUILTINS
    for name in TYPED_BUILTINS:
        entry = REGISTRY.get("typed", name)
        assert entry is not None
        assert entry.builtin
        assert entry.summary, f"{name} has no summary"


def test_negated_names_are_not_registered_separately() -> None:
    assert not [name for name in REGISTRY.names("typed") if name.startswith("not-")]


def test_suggest_normalises_underscores_and_typos() -> None:
    assert REGISTRY.suggest("typed", "rouge_n") == "rouge-n"
    assert REGISTRY.suggest("typed", "contians") == "contains"
    assert REGISTRY.suggest("typed", "qqqqqq") is None


def test_a_fresh_registry_is_empty_and_independent() -> None:
    fresh = Registry()
    fresh._entry_points_loaded = True  # no plugins for this check
    assert fresh.names("typed") == []
    assert fresh.get("typed", "contains") is None
    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": "contains", "value": "x"}], registry=fresh)
    assert str(info.value.problems[0]) == "assertions[0].type: unknown assertion 'contains'"


# --- entry points --------------------------------------------------------------------------


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed-looking distribution ``fake_plugin`` declaring three entry points."""
    info = tmp_path / "fake_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """
            [assertly.assertions]
            has-fake-marker = fake_plugin_checks:has_marker
            fake-module = fake_plugin_module
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "fake_plugin_checks.py").write_text(
        textwrap.dedent(
            '''
            def has_marker(output, context):
                """The output carries the fake marker."""
                if "<<fake>>" in output:
                    return {"pass": True, "score": 1.0}
                return {"pass": False, "score": 0.0, "reason": "no <<fake>> marker"}
            '''
        ),
        encoding="utf-8",
    )
    (tmp_path / "fake_plugin_module.py").write_text(
        textwrap.dedent(
            """
            def get_assert(output, context):
                return output.count("!") <= 1
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for module in ("fake_plugin_checks", "fake_plugin_module"):
        sys.modules.pop(module, None)


def test_entry_point_is_resolved_lazily(fake_distribution: Path, registry: Registry) -> None:
    # Known names never load plugins.
    assertly.compile([{"type": "contains", "value": "x"}], registry=registry)
    assert "fake_plugin_checks" not in sys.modules
    assert not registry._entry_points_loaded

    expectation = assertly.compile([{"type": "has-fake-marker"}], registry=registry)
    assert "fake_plugin_checks" in sys.modules
    assert expectation.check("see <<fake>>").passed
    result = expectation.check("plain")
    assert result.results[0].outcome is Outcome.FAILED
    assert result.results[0].message == "no <<fake>> marker"

    entry = registry.get("typed", "has-fake-marker")
    assert entry is not None
    assert entry.builtin is False
    assert entry.summary == "The output carries the fake marker."
    assert registry.get("expect", "has-fake-marker") is not None


def test_entry_point_to_a_module_registers_its_get_assert(
    fake_distribution: Path, registry: Registry
) -> None:
    expectation = assertly.compile([{"type": "fake-module"}], registry=registry)
    assert expectation.check("fine!").passed
    assert not expectation.check("wow!!").passed


def test_entry_point_names_work_negated_and_in_expect_dicts(
    fake_distribution: Path, registry: Registry
) -> None:
    assert assertly.compile([{"type": "not-has-fake-marker"}], registry=registry).check("x").passed
    assert assertly.compile({"has-fake-marker": None}, registry=registry).check("<<fake>>").passed


def test_misspelt_plugin_name_gets_did_you_mean(
    fake_distribution: Path, registry: Registry
) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": "has-fake-markr"}], registry=registry)
    assert str(info.value.problems[0]) == (
        "assertions[0].type: unknown assertion 'has-fake-markr' (did you mean 'has-fake-marker'?)"
    )


def test_entry_points_are_scanned_once(fake_distribution: Path, registry: Registry) -> None:
    registry.load_entry_points()
    sys.modules.pop("fake_plugin_checks", None)
    assert registry.get("typed", "no-such-name") is None
    assert "fake_plugin_checks" not in sys.modules  # not re-imported on every unknown name


def test_entry_point_loading_into_a_second_registry(
    fake_distribution: Path, registry: Registry
) -> None:
    other = Registry()
    assert registry.get("typed", "has-fake-marker") is not None
    assert other.get("typed", "has-fake-marker") is not None


def test_a_broken_plugin_warns_and_the_others_still_load(
    fake_distribution: Path, registry: Registry
) -> None:
    info = fake_distribution / "fake_plugin-0.1.dist-info" / "entry_points.txt"
    info.write_text(
        info.read_text(encoding="utf-8") + "broken = fake_plugin_missing_module:nothing\n",
        encoding="utf-8",
    )
    with pytest.warns(RuntimeWarning, match="could not load the assertion plugin 'broken'"):
        entry = registry.get("typed", "has-fake-marker")
    assert entry is not None


def test_without_the_distribution_the_name_stays_unknown(registry: Registry) -> None:
    with pytest.raises(ConfigError) as info:
        assertly.compile([{"type": "has-fake-marker"}], registry=registry)
    assert info.value.problems[0].message.startswith("unknown assertion 'has-fake-marker'")


def test_loading_a_module_twice_is_harmless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: Registry
) -> None:
    module = tmp_path / "fake_twice_module.py"
    module.write_text(
        textwrap.dedent(
            """
            def get_assert(output, context):
                return True
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry.load_module("fake_twice_module")
        registry.load_module("fake_twice_module")  # no "already registered" error
        assert registry.get("typed", "fake_twice_module") is not None
    finally:
        sys.modules.pop("fake_twice_module", None)
