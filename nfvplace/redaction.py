"""Secrets never leave: bearer-token files read strictly, and secrets cut out of what is said.

A token file holds one token (RFC 6750's b64token: letters, digits and `-._~+/`, then `=`
padding) on one line. Anything else is refused without echoing it: the agent once sent a whole
tokens file as its `Authorization` header, and the HTTP library's refusal quoted it in a log line.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from . import errors
from .errors import Issue, NfvplaceError

_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_ROLE_LINE = re.compile(r"^\s*[\w-]+\s*:", re.MULTILINE)
# `scheme://user:password@` and `password=...` in connection strings
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s'\"]*:)[^\s'\"]*(?=@)")
_PARAM_PASSWORD = re.compile(r"(?P<head>\bpassword=)[^&\s'\"]*", re.IGNORECASE)
HIDDEN = "***"


def read_token(path: Path, option: str = "--token-file") -> str:
    """The bearer token in `path`; NfvplaceError `nfvplace.usage.invalid_option` when the file
    cannot be read, other users may read it, or it is not exactly one token. No message quotes
    the file's content."""
    try:
        mode = path.stat().st_mode
        raw = path.read_bytes()
    except OSError as exc:
        raise NfvplaceError(
            errors.USAGE_INVALID_OPTION,
            f"cannot read {option}: {exc.strerror or type(exc).__name__}",
            file=str(path),
        ) from None
    if mode & stat.S_IRWXO:
        raise NfvplaceError(
            errors.USAGE_INVALID_OPTION,
            f"other users may read the token file (mode {mode & 0o777:o})",
            file=str(path),
            issues=(Issue("readable by others", hint=f"chmod 600 {path}"),),
        )
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        text = None
    if text is not None and is_token(text):
        return text
    raise NfvplaceError(
        errors.USAGE_INVALID_OPTION,
        f"{option} is not one bearer token ({_shape(text)})",
        file=str(path),
        issues=(Issue("not one token", path=option, hint=_token_hint(text, option)),),
    )


def is_token(text: str) -> bool:
    """Whether `text` is one bearer token (RFC 6750's b64token)."""
    return _B64TOKEN.fullmatch(text) is not None


def _shape(text: str | None) -> str:
    """What the file holds, in counts only (never its characters)."""
    if text is None:
        return "not UTF-8 text"
    if not text:
        return "it is empty"
    lines = len(text.splitlines())
    if lines > 1:
        return f"{lines} lines"
    return f"{len(text)} characters, some outside letters, digits and -._~+/="


def _token_hint(text: str | None, option: str) -> str:
    one = "(umask 077; echo TOKEN > agent.token)"
    if text and _ROLE_LINE.search(text):
        return (
            "this looks like the service's tokens file (role: [tokens]); give "
            f"{option} a file holding one token of one role alone: {one}"
        )
    return f"write one token on one line, nothing else: {one}"


def redact(text: str, *secrets: str | None) -> str:
    """`text` with every given secret (and any password in a URL) replaced by `***`."""
    for secret in filter(None, secrets):
        for form in {secret, unquote(secret)}:  # as given, and %-decoded (URLs)
            text = text.replace(form, HIDDEN)
    return redact_urls(text)


def url_password(url: str | None) -> str | None:
    """The password in a URL (`scheme://user:password@host/...`), if it has one."""
    try:
        return urlsplit(url or "").password
    except ValueError:
        return None


def redact_urls(text: str) -> str:
    """`text` with the password of every `scheme://user:password@` and `password=` hidden."""
    text = _URL_PASSWORD.sub(lambda m: m["head"] + HIDDEN, text)
    return _PARAM_PASSWORD.sub(lambda m: m["head"] + HIDDEN, text)
