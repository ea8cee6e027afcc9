"""What the store keeps of a test for reports: `TestMeta`, one per test of a run.

Written when a run starts (before any trial), read back to build a stored run's reports, to
compare runs and to resume one. The JSON form is the store's (`store._codec` compacts it), so
its keys keep their published names. This module imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["TestMeta"]


@dataclass(slots=True)
class TestMeta:
    """A test as the store describes it.

    Attributes:
        key: The test's key (``file::suite::id``).
        id: Its id.
        name: Its name (its id when it has none).
        suite: Its suite.
        file: The file that defines it.
        line: The line of its definition, if known.
        tags: Its tags.
        priority: Its priority, if it has one.
        description: Its description, if it has one.
        definition: The digest of what defined it (``loading.definition_digest``).
        agent: The agent it calls, if named.
        target: In a matrix run, the label of the target it ran against (`key` ends in
            ``[label]``); None in a run of one target.
        pass_threshold: The threshold its verdict uses (its file's, else the run's).
        input: What is sent: the input, or for a test of steps ``[{step, input}, ...]``.
        multi_step: Whether it is a test of steps.
        conversation: Whether it is a conversation test (its input: the scripted user turns
            and the simulated user's persona).
    """

    __test__ = False  # not a pytest test class, whatever its name

    key: str
    id: str
    name: str
    suite: str
    file: str
    line: int | None = None
    tags: list[str] = field(default_factory=list)
    priority: str | int | None = None
    description: str | None = None
    definition: str | None = None
    agent: str | None = None
    target: str | None = None
    pass_threshold: str | None = None
    input: Any = None
    multi_step: bool = False
    conversation: bool = False

    def to_json(self) -> dict[str, Any]:
        """The store's form (``multi_step`` only for a test of steps)."""
        data = {
            "definition": self.definition,
            "key": self.key,
            "id": self.id,
            "name": self.name,
            "suite": self.suite,
            "file": self.file,
            "line": self.line,
            "tags": self.tags,
            "priority": self.priority,
            "description": self.description,
            "agent": self.agent,
            "pass_threshold": self.pass_threshold,
            "input": self.input,
        }
        if self.multi_step:
            data["multi_step"] = True
        if self.target is not None:
            data["target"] = self.target
        if self.conversation:
            data["conversation"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], key: str | None = None) -> TestMeta:
        """Read the store's form, leniently (an older assertly's row may lack fields).

        Args:
            data: The stored metadata.
            key: The row's key, for metadata that does not hold its own.
        """
        test_key = str(data.get("key") or key or "")
        test_id = str(data.get("id", test_key))
        tags = data.get("tags")
        return cls(
            key=test_key,
            id=test_id,
            name=test_id if data.get("name") is None else str(data["name"]),
            suite=str(data.get("suite", "")),
            file=str(data.get("file", "")),
            line=data.get("line"),
            tags=list(tags) if isinstance(tags, list) else [],
            priority=data.get("priority"),
            description=data.get("description"),
            definition=data.get("definition"),
            agent=data.get("agent"),
            target=None if data.get("target") is None else str(data["target"]),
            pass_threshold=data.get("pass_threshold"),
            input=data.get("input"),
            multi_step=bool(data.get("multi_step")),
            conversation=bool(data.get("conversation")),
        )
