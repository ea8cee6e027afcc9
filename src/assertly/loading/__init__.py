"""Reading files into engine inputs: expectations, responses, test files, eval sections, config.

Uses the engine; knows nothing of targets, runs or reports.
"""

from ._cases import Conversation, SimulatedUser, SuiteHooks, Turn, definition_digest
from ._config import (
    check_against_config,
    config_read,
    find_config,
    load_config,
    load_config_plugins,
    simulator_problems,
)
from ._files import load_data_argument, load_located_argument, read_text_argument
from ._models import ConfigModel, JudgeModel
from ._problems import located_in_file
from ._schema import json_schemas
from ._tests import Dataset, EvalCase, EvalSuite, LoadResult, Step, TestCase, discover, load_paths

__all__ = [
    "Conversation",
    "SimulatedUser",
    "Turn",
    "ConfigModel",
    "JudgeModel",
    "Dataset",
    "EvalCase",
    "EvalSuite",
    "LoadResult",
    "Step",
    "SuiteHooks",
    "TestCase",
    "check_against_config",
    "discover",
    "config_read",
    "definition_digest",
    "find_config",
    "json_schemas",
    "load_config",
    "load_config_plugins",
    "load_data_argument",
    "load_located_argument",
    "load_paths",
    "located_in_file",
    "read_text_argument",
    "simulator_problems",
]
