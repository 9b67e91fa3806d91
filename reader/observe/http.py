"""HTTP GETs for the live sources (a server's /metrics, a Prometheus server's query API), each failure
one clear sentence: unreachable, too slow, or an error status."""
from __future__ import annotations

import contextlib
import socket
import urllib.error
import urllib.parse
import urllib.request

from ..errors import ReaderError

USER_AGENT = "vllm-reader-observe"


def get(url: str, timeout: float, what: str = "the server", error_body: bool = False) -> str:
    """The body of a 200 answer; with error_body, the body of an error answer too (Prometheus explains its
    errors in JSON)."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "text/plain, application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as err:
        if error_body:
            with contextlib.suppress(OSError):
                return err.read().decode("utf-8", errors="replace")
        body = _body(err)
        raise ReaderError(f"{what} at {url} answered HTTP {err.code} {err.reason}" + (f": {body}" if body else "")
                          + ".", key="SOURCE") from None
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise ReaderError(f"{what} at {url} did not answer within {timeout:g} s.", key="SOURCE",
                              hint="Check the address, or allow longer with --timeout.") from None
        text = getattr(reason, "strerror", None) or str(reason)
        raise ReaderError(f"cannot reach {what} at {url}: {text}.", key="SOURCE",
                          hint="Check that it is running and that the address and port are right.") from None
    except (socket.timeout, TimeoutError):
        raise ReaderError(f"{what} at {url} did not answer within {timeout:g} s.", key="SOURCE",
                          hint="Check the address, or allow longer with --timeout.") from None
    except ValueError as err:  # a malformed URL
        raise ReaderError(f"not a usable URL '{url}': {err}.", key="SOURCE") from None


def metrics_url(url: str) -> str:
    """A server's address becomes its /metrics page when no path is given."""
    parts = urllib.parse.urlsplit(url)
    if parts.path in ("", "/"):
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/metrics", parts.query, ""))
    return url


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _body(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    return " ".join(text.split())[:300]
