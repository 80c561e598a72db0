"""Rendering untrusted markdown: markdown-it (raw HTML off), then one nh3 allow-list.
`render_markdown` is the only place in the project that marks HTML safe."""

from __future__ import annotations

import re
from collections.abc import Sequence

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict


def _render_image_as_link(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # An <img> in agent-written memory loads a URL as soon as the page opens: a tracking
    # pixel, or a way to leak data through the query string. A link loads nothing until
    # the user clicks it, and still goes through the sanitizer's scheme check.
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    label = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{escapeHtml(src)}">{escapeHtml(label)}</a>'


def _render_cell_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # markdown-it aligns table cells with style="text-align:…", which a strict CSP blocks;
    # the align attribute says the same without inline style.
    token = tokens[idx]
    style = token.attrs.pop("style", None)
    if isinstance(style, str) and style.startswith("text-align:"):
        token.attrSet("align", style.removeprefix("text-align:"))
    return self.renderToken(tokens, idx, options, env)


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_MARKDOWN.add_render_rule("image", _render_image_as_link)
_MARKDOWN.add_render_rule("th_open", _render_cell_open)
_MARKDOWN.add_render_rule("td_open", _render_cell_open)

_LANGUAGE_CLASS = re.compile(r"language-[\w+#.-]+")


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    # Fenced code carries class="language-…"; any other class could borrow the portal's CSS.
    if tag == "code" and attribute == "class":
        return value if _LANGUAGE_CLASS.fullmatch(value) else None
    return value


_ALIGN = {"left", "center", "right"}
_CLEANER = nh3.Cleaner(
    # Exactly what the markdown above can produce, nothing more (no img: see above).
    tags={
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "hr", "br"),
        *("ul", "ol", "li", "em", "strong", "s", "del", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    },
    attributes={"a": {"href", "title"}, "code": {"class"}, "ol": {"start"}},
    tag_attribute_values={"th": {"align": _ALIGN}, "td": {"align": _ALIGN}},
    attribute_filter=_filter_attribute,
    url_schemes={"http", "https", "mailto"},
    # A relative URL would resolve against the portal itself (including //host, which
    # leaves it); memory has no base of its own, so such links keep only their text.
    url_relative="deny",
    link_rel="noopener noreferrer nofollow",
)


def render_markdown(text: str) -> SafeString:
    """Untrusted markdown to HTML that is safe to insert into a page."""
    # The only mark_safe in the project: raw HTML is off in markdown-it and whatever it
    # emits passes the allow-list above.
    return mark_safe(_CLEANER.clean(_MARKDOWN.render(text)))  # noqa: S308
