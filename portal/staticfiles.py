"""Where static files are served from in production: whitenoise's compressed manifest
storage, each file's URL worked out once per process."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Every page asks for the same seven URLs (base.html's stylesheets, scripts and icon),
    and each took about 60 µs to look up in the manifest and join to STATIC_URL, 0.4 ms a
    page (docs/performance.md). The manifest is read once, when the process starts, so a
    name's URL does not change while it runs. Only names the manifest holds are kept (an
    unknown one raises, as before), so what is kept is bounded by the collected files."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name: str | None, force: bool = False) -> str:
        if force or name is None:
            return super().url(name, force)
        url = self._urls.get(name)
        if url is None:
            url = self._urls[name] = super().url(name)
        return url
