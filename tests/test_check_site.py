"""``docs/check_site.py`` (``make docs-check``) finds what a reader would: on a small site written here, it
names the broken link, the missing anchor, the image that does not load and the JavaScript error, and passes
the page that has none (slow: it starts headless Chromium; needs the docs extra and Debian's chromium)."""

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

# a 1 x 1 PNG
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def _check_site():
    pytest.importorskip("selenium")
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "docs" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(body: str) -> str:
    return f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>"


def test_broken_link_missing_anchor_image_and_script_error_are_named(tmp_path, capsys):
    check_site = _check_site()
    site = tmp_path / "html"
    (site / "gallery").mkdir(parents=True)
    (site / "pixel.png").write_bytes(PIXEL)
    (site / "index.html").write_text(
        _page(
            '<h1 id="top">x</h1><img src="pixel.png"><a href="gallery/index.html#top">ok</a>'
            '<a href="https://example.org/">out</a>'
        )
    )
    (site / "gallery" / "index.html").write_text(_page('<h1 id="top">g</h1><a href="plot_01_a.html">a</a>'))
    (site / "gallery" / "plot_01_a.html").write_text(
        _page(
            '<img src="missing.png"><a href="../nowhere.html">gone</a><a href="index.html#nothing">anchor</a>'
            "<script>undefinedFunction();</script>"
        )
    )
    shots = tmp_path / "shots"
    assert check_site.main([str(site), "--screenshots", str(shots), "--page", "index.html"]) == 0
    assert (shots / "index.png").stat().st_size > 1000
    assert check_site.main([str(site), "--screenshots", str(shots)]) == 1
    err = capsys.readouterr().err
    assert "image did not load" in err and "missing.png" in err
    assert "broken link" in err and "nowhere.html" in err
    assert "missing anchor" in err and "#nothing" in err
    assert "undefinedFunction" in err
    assert "index.html:" not in err  # the clean pages have no problem
