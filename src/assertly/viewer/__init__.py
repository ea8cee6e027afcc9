"""``assertly view``: a local, read-only web viewer over the run store, and its static export.

Sits above the reports (it reuses their analysis of a test and the comparison's view) and below
the command line. aiohttp is imported only when a server starts (`serve`, `build_app`).
"""

from ._export import export_site
from ._pages import CSP, Links
from ._serve import serve
from ._site import Site

__all__ = ["CSP", "Links", "Site", "export_site", "serve"]
