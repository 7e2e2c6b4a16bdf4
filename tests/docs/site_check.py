"""Test support (docs): check a built site — every internal link resolves, and headless Chromium
renders the home page and a guide (screenshots). Imports the standard library only.

    .venv/bin/python -m tests.docs.site_check [SITE_DIR] [--shots DIR]    # make docs-check

No network: links are read from the HTML files, and Chromium opens ``file://`` URLs with its
background networking off.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

PAGES_SHOT = {"home.png": "index.html", "guide.png": "guides/openapi.html"}
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"] or "")
        for key in ("href", "src"):
            value = found.get(key)
            if value and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def broken_links(site: Path) -> list[str]:
    """``page: link`` for every internal link (file and #fragment) that does not resolve."""
    parsed = {p: _parse(p) for p in site.rglob("*.html")}
    broken: list[str] = []
    for page, found in sorted(parsed.items()):
        if page.name == "404.html":  # served at any path: mkdocs writes its links from the root
            continue
        for link in found.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue  # external: not followed (no network)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    return broken


def screenshot(page: Path, out: Path) -> None:
    """Render ``page`` in headless Chromium into the PNG ``out`` (a new profile each time)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="toolbind-chromium-") as profile:
        subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={out}",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    if not out.is_file() or out.stat().st_size < 1000:
        raise RuntimeError(f"chromium wrote no screenshot of {page}")


def main(argv: list[str] | None = None) -> int:
    """Check the links, take the screenshots; exit 1 on a broken link."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=Path("site"))
    parser.add_argument("--shots", type=Path, default=Path("site-shots"))
    args = parser.parse_args(argv)
    broken = broken_links(args.site)
    for line in broken:
        print(f"broken link: {line}", file=sys.stderr)
    args.shots.mkdir(parents=True, exist_ok=True)
    for name, page in PAGES_SHOT.items():
        screenshot(args.site / page, args.shots / name)
        print(f"screenshot: {args.shots / name}")
    print(f"{len(list(args.site.rglob('*.html')))} pages, {len(broken)} broken internal links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
