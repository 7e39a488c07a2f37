"""Look at the built documentation site in a real browser (headless Chromium through chromedriver).

Usage: ``python docs/check_site.py docs/_build/html --screenshots DIR [--page PATH ...]``.

The site is served on 127.0.0.1 from a local HTTP server. Chromium opens the index, the gallery's index and
the first example page (or the ``--page`` paths), saves a screenshot of each whole page in DIR and collects, per page:

- JavaScript errors and failed loads of the page's resources (the browser's log at level SEVERE);
- images that did not load (``naturalWidth == 0``);
- broken links: every link of the page into the site must reach a file the server has, and its ``#anchor``
  an element of that page; links out of the site are counted, not followed (the check is offline).

Exit status 1, with one line per problem, when any page has one; 0 otherwise.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

DEFAULT_PAGES = ("index.html", "gallery/index.html")
MISSING_IMAGES = "return Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src);"
LINKS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"
FULL_PAGE_LIMIT = 6000  # px, the tallest screenshot taken (a long page is cut there)
IDS = "return Array.from(document.querySelectorAll('[id]')).map(e => e.id);"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser left a page before it loaded
            super().handle_error(request, client_address)


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1 (a free port) from a daemon thread; the server and its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def browser(width: int = 1280, height: int = 1000) -> webdriver.Chrome:
    """Headless Chromium (Debian's ``chromium`` and ``chromium-driver``) that keeps the console log."""
    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def first_example(root: Path) -> str | None:
    """The first gallery example page (by name), relative to ``root``."""
    pages = sorted((root / "gallery").glob("plot_*.html"))
    return pages[0].relative_to(root).as_posix() if pages else None


def _reachable(url: str, cache: dict[str, bool]) -> bool:
    if url not in cache:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                cache[url] = response.status == 200
        except (urllib.error.URLError, OSError):
            cache[url] = False
    return cache[url]


def _anchors(driver, page_url: str, cache: dict[str, set[str]]) -> set[str]:
    if page_url not in cache:
        current = driver.current_url
        driver.get(page_url)
        cache[page_url] = set(driver.execute_script(IDS))
        driver.get(current)
    return cache[page_url]


def check_page(driver, base: str, page: str, screenshot: Path, seen: dict, anchors: dict) -> tuple[list[str], dict]:
    """Open ``page`` (relative to ``base``), save its screenshot and return (problems, counts)."""
    url = urllib.parse.urljoin(base, page)
    driver.get_log("browser")  # drop what earlier pages left in the log
    driver.get(url)
    problems = []
    if driver.execute_script("return document.readyState") != "complete":
        problems.append(f"{page}: did not finish loading")
    title = driver.title
    for entry in driver.get_log("browser"):
        # the browser asks every site for /favicon.ico by itself; only what the page loads counts
        if entry.get("level") == "SEVERE" and "/favicon.ico " not in entry.get("message", ""):
            problems.append(f"{page}: browser error: {entry.get('message')}")
    images = driver.execute_script("return document.images.length;")
    problems += [f"{page}: image did not load: {src}" for src in driver.execute_script(MISSING_IMAGES)]
    own_ids = set(driver.execute_script(IDS))
    links = driver.execute_script(LINKS)
    internal = external = 0
    for link in links:
        target, _, fragment = link.partition("#")
        if not target.startswith(base):
            external += not link.startswith(("javascript:", "mailto:"))
            continue
        internal += 1
        if not _reachable(target, seen):
            problems.append(f"{page}: broken link: {link}")
        elif fragment:
            ids = own_ids if target == url.partition("#")[0] else _anchors(driver, target, anchors)
            if urllib.parse.unquote(fragment) not in ids:
                problems.append(f"{page}: link to a missing anchor: {link}")
    screenshot.parent.mkdir(parents=True, exist_ok=True)  # (_anchors came back to this page)
    size = driver.get_window_size()
    height = driver.execute_script("return document.documentElement.scrollHeight;")
    driver.set_window_size(size["width"], min(max(height, size["height"]), FULL_PAGE_LIMIT))  # the whole page
    driver.save_screenshot(str(screenshot))
    driver.set_window_size(size["width"], size["height"])
    counts = {"title": title, "images": images, "internal_links": internal, "external_links": external}
    return problems, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built HTML folder (docs/_build/html)")
    parser.add_argument("--screenshots", type=Path, default=Path("docs/_build/screenshots"))
    parser.add_argument("--page", action="append", help="a page to check, relative to the site (repeatable)")
    args = parser.parse_args(argv)
    root = args.site.resolve()
    if not (root / "index.html").is_file():
        print(f"no built site at {args.site} (run `make docs`)", file=sys.stderr)
        return 1
    pages = args.page or [*DEFAULT_PAGES, *filter(None, [first_example(root)])]
    server, base = serve(root)
    driver = browser()
    problems: list[str] = []
    seen: dict[str, bool] = {}
    anchors: dict[str, set[str]] = {}
    try:
        for page in pages:
            shot = args.screenshots / (page.replace("/", "_").removesuffix(".html") + ".png")
            found, counts = check_page(driver, base, page, shot, seen, anchors)
            problems += found
            print(
                f"{page}: {counts['title']!r}, {counts['images']} images, {counts['internal_links']} links into the "
                f"site, {counts['external_links']} out, {len(found)} problems; screenshot {shot}"
            )
    finally:
        driver.quit()
        server.shutdown()
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
