"""``python -m assertly``: the command line."""

from .cli import main

main()
