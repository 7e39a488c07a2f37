"""Sphinx configuration of flexbody's documentation site (``make docs``; warnings are errors).

The pages are the Markdown files of docs/ (read by myst-parser), the API reference generated from the
docstrings of the public API (``import flexbody as fb``) by autodoc/autosummary (numpydoc-style sections read
by napoleon), and a gallery of the scripts in docs/examples/, run at build time by sphinx-gallery, whose
matplotlib figures and pyvista plotters become the pages' pictures.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

import pyvista
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import flexbody  # noqa: E402 (after the repository is on the path)

pyvista.OFF_SCREEN = True  # no display: the gallery's plotters render off-screen
pyvista.BUILDING_GALLERY = True  # sphinx-gallery's pyvista scraper collects every plotter a script shows
pyvista.set_plot_theme("document")
os.environ.setdefault("PYVISTA_OFF_SCREEN", "true")

project = "flexbody"
author = "the flexbody developers"
copyright = "2026, the flexbody developers"
release = flexbody.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples", "gallery/*.ipynb", "**.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# --- API reference
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_param = False  # types as text: "(n_dofs,) array" is a shape, not a cross-reference
napoleon_use_ivar = True  # attributes as fields of their class, not a second description
# Sphinx links every word of a type field; the types of numpydoc fields here are shapes in prose ("(n_dofs,) array"),
# whose words name attributes of several classes (n_dofs, n, q): those are not references, so that warning is off
suppress_warnings = ["ref.python"]

# --- gallery
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"/_",
    "image_scrapers": ("matplotlib", "pyvista"),
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "run_stale_examples": True,  # every build runs every example: the pages show what this version computes
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
}

# --- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"flexbody {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_show_sourcelink = True
# the theme reads its light/dark mode from here on a first visit (left empty, it logs an error in the console)
html_context = {"default_mode": "auto"}

_logger = logging.getLogger("flexbody.docs")


def _require_docstring(app, what, name, obj, options, lines) -> None:
    """Every public name of the API reference has a docstring: the build (warnings are errors) fails on one
    that has none, naming it."""
    short = name.rsplit(".", 1)[-1]
    if short.startswith("_") or what == "module":
        return
    if what == "attribute" and not callable(obj):
        return  # dataclass fields and constants are described in their class's or module's docstring
    if not "".join(lines).strip() and not inspect.getdoc(obj):
        _logger.warning("public name without a docstring: %s", name)


def _skip_top_level_names(app, what, name, obj, skip, options):
    """A namespace's page (``fb.mesh``, ``fb.control``, ...) leaves out what the top level already documents
    (``fb.HexMesh``, ``fb.PointTask``, ...): one description per object."""
    if name in flexbody.__all__ and getattr(flexbody, name, None) is obj and inspect.isclass(obj):
        return True
    return None


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _require_docstring)
    app.connect("autodoc-skip-member", _skip_top_level_names)
