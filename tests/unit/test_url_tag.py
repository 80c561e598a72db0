"""`{% url %}` in every template: each URL worked out once per process and script prefix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.template import Context, engines
from django.urls import NoReverseMatch, get_script_prefix, set_script_prefix

from memory_ui.templatetags import portal_urls


def render(source: str, **context: object) -> str:
    return engines["django"].from_string(source).render(context)


@pytest.fixture
def reversed_names(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    calls: list[str] = []
    reverse = portal_urls.reverse

    def counted(view_name: str, **kwargs: object) -> str:
        calls.append(view_name)
        return reverse(view_name, **kwargs)

    monkeypatch.setattr(portal_urls, "reverse", counted)
    portal_urls._reversed.cache_clear()
    prefix = get_script_prefix()
    yield calls
    set_script_prefix(prefix)
    portal_urls._reversed.cache_clear()


def test_every_template_s_url_is_reversed_once(reversed_names: list[str]) -> None:
    for _ in range(3):
        assert render("{% url 'dashboard' %}") == "/"
        assert render("{% url 'memory_agent' name %}", name="travel-planner") == (
            "/memory/agents/travel-planner"
        )
    assert reversed_names == ["dashboard", "memory_agent"]


def test_a_url_follows_the_script_prefix_it_is_served_under(reversed_names: list[str]) -> None:
    assert render("{% url 'search' %}") == "/search"
    set_script_prefix("/portal/")
    assert render("{% url 'search' %}") == "/portal/search"
    set_script_prefix("/")
    assert render("{% url 'search' %}") == "/search"


def test_it_stores_and_refuses_as_django_s_own_does(reversed_names: list[str]) -> None:
    assert render("{% url 'memory_agent' 'x' as link %}[{{ link }}]") == "[/memory/agents/x]"
    assert render("{% url 'no_such_page' as link %}[{{ link }}]") == "[]"
    with pytest.raises(NoReverseMatch):
        render("{% url 'no_such_page' %}")
    with pytest.raises(NoReverseMatch):
        render("{% url 'no_such_page' %}")
    assert reversed_names.count("no_such_page") == 3  # a failure is not kept


def test_context_without_a_request_still_renders() -> None:
    template = engines["django"].engine.from_string("{% url 'dashboard' %}")
    assert template.render(Context()) == "/"


class Unhashable(str):
    __hash__ = None  # type: ignore[assignment]


def test_an_argument_that_cannot_be_a_key_is_reversed_uncached(reversed_names: list[str]) -> None:
    name = Unhashable("travel-planner")
    for _ in range(2):
        assert render("{% url 'memory_agent' name %}", name=name) == "/memory/agents/travel-planner"
    assert reversed_names == ["memory_agent", "memory_agent"]


def test_equal_values_of_other_types_are_not_one_url(reversed_names: list[str]) -> None:
    assert render("{% url 'memory_agent' a %}", a=1) == "/memory/agents/1"
    assert render("{% url 'memory_agent' a %}", a=True) == "/memory/agents/True"
