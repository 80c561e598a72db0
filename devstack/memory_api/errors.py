"""The memory-api's one error shape: `{"error": "..."}` (seed 001's 403 body; M1)."""

from __future__ import annotations

import json

from werkzeug.wrappers import Response


class Refused(Exception):
    """Any error answer: `{"error": message}` with this status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error(status: int, message: str) -> Response:
    return Response(json.dumps({"error": message}), status=status, mimetype="application/json")
