"""Django's `{% url %}`, with each URL worked out once per process: a builtin
(settings TEMPLATES "builtins"), so every template's `{% url %}` is this one.

A signed-in page reversed about 20 URLs on every request (base.html's menu, the memory
page's forms), each 14-17 µs, and nearly all the same on every request. A URL
depends only on the view's name, its arguments, the script prefix the portal is served
under, the URL conf and the current app, so that is the key; a name that does not reverse
raises as before (a failure is not kept)."""

from functools import lru_cache

from django import template
from django.template import defaulttags
from django.template.base import Parser, Token
from django.template.context import Context
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse
from django.utils.html import conditional_escape

register = template.Library()


@lru_cache(maxsize=4096)
def _reversed(
    view_name: str,
    args: tuple,
    kwargs: tuple,
    current_app: str | None,
    prefix: str,
    urlconf: str | None,
) -> str:
    # prefix and urlconf are not passed on: reverse() reads the same thread-locals.
    return reverse(view_name, args=args, kwargs=dict(kwargs), current_app=current_app)


class CachedURLNode(defaulttags.URLNode):
    def render(self, context: Context) -> str:
        args = tuple(arg.resolve(context) for arg in self.args)
        kwargs = tuple(sorted((k, v.resolve(context)) for k, v in self.kwargs.items()))
        view_name = self.view_name.resolve(context)
        try:
            current_app = context.request.current_app
        except AttributeError:
            try:
                current_app = context.request.resolver_match.namespace
            except AttributeError:
                current_app = None
        url = ""
        values = (*args, *(value for _, value in kwargs))
        try:
            # Only plain strings and ints are keys: values equal but written differently
            # (1, True, 1.0) would share one URL. Anything else is reversed as Django does.
            if all(type(value) in (str, int) for value in values):
                url = _reversed(
                    view_name, args, kwargs, current_app, get_script_prefix(), get_urlconf()
                )
            else:
                url = reverse(view_name, args=args, kwargs=dict(kwargs), current_app=current_app)
        except NoReverseMatch:
            if self.asvar is None:
                raise
        if self.asvar:
            context[self.asvar] = url
            return ""
        return conditional_escape(url) if context.autoescape else url


@register.tag
def url(parser: Parser, token: Token) -> CachedURLNode:
    node = defaulttags.url(parser, token)
    return CachedURLNode(node.view_name, node.args, node.kwargs, node.asvar)
