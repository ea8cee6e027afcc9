"""``python -m assertly.cli``: the command line."""

from ._main import main

main()
