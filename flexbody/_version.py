"""The version of flexbody, in one place: the package (``flexbody.__version__``), the command
(``flexbody --version``) and the build (``pyproject.toml`` reads it from here) all take it from this file."""

__version__ = "0.2.0"
