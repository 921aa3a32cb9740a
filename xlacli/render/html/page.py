"""One self-contained HTML page from a Jinja2 template: inline CSS and JS, a strict CSP.

The page must open offline from a CI artifact and fetch nothing, so its
Content-Security-Policy is ``default-src 'none'``; the one inline stylesheet and
the one inline script are allowed by their SHA-256 hashes, nothing else is.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from xlacli.paths import display_location, display_path
from xlacli.units import format_bytes, format_seconds, short_hash

TEMPLATES = Path(str(resources.files("xlacli.render").joinpath("templates")))


@cache
def environment() -> Environment:
    """The Jinja2 environment: autoescaping on, undefined names an error."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(("html", "j2", "svg")),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        bytes=format_bytes,
        seconds=format_seconds,
        location=lambda value: display_location(value) or "",
        path=lambda value: display_path(value) if value else "",
        short=short_hash,
    )
    return env


def csp_hash(text: str) -> str:
    """``'sha256-...'`` of an inline element's text, as a CSP source."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(style: str, script: str) -> str:
    """Nothing from anywhere, but the page's own stylesheet and script."""
    return (
        f"default-src 'none'; style-src {csp_hash(style)}; script-src {csp_hash(script)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )


def render_page(template: str, context: Mapping[str, Any]) -> str:
    """Render ``template`` (which extends ``base.html.j2``) into a whole page."""
    env = environment()
    style, script = (_template_text(env, name) for name in ("page.css", "page.js"))
    return env.get_template(template).render(
        **context,
        page_style=style,
        page_script=script,
        csp=content_security_policy(style, script),
    )


def _template_text(env: Environment, name: str) -> str:
    """A file beside the templates (the page's CSS or JS), as the templates' loader reads it."""
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]
