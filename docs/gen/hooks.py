"""MkDocs hooks of nbcuda's documentation (mkdocs.yml names this file under `hooks:`).

on_files adds the generated pages to the site, made from their sources at every build:
  reference/python.md   from the installed nbcuda module (python_reference.py),
  reference/c-api.md    from include/nbcuda.h (c_reference.py),
  language/reference.md from the compiler's tables in src/compiler/ (language_tables.py),
  pygments.css          the stylesheet of the code blocks Pygments colours at build time,
so that nothing is fetched when a page is viewed and the reference cannot drift from the
code. A generator's error (a public name no section lists, a table not found) fails the build.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import c_reference  # noqa: E402
import language_tables  # noqa: E402
import python_reference  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402


def _pygments_css():
    from pygments.formatters import HtmlFormatter
    return HtmlFormatter(style="default").get_style_defs(".codehilite")


def on_files(files, config):
    pages = {
        "reference/python.md": python_reference.page(),
        "reference/c-api.md": c_reference.page(),
        "language/reference.md": language_tables.page(),
        "pygments.css": _pygments_css(),
    }
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    return files
