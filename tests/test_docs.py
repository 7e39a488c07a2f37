"""The generated API reference (docs/api.md) matches the docstrings, and the README's images exist."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_reference_is_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "make_api.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_readme_images_exist():
    text = (ROOT / "README.md").read_text()
    images = [part.split(")")[0] for part in text.split("](")[1:] if part.split(")")[0].endswith(".png")]
    assert images
    for image in images:
        assert (ROOT / image).is_file() and (ROOT / image).stat().st_size > 10_000, image
