"""`nfvplace.redaction`: a token file is one token or it is refused without its content; secrets
and URL passwords are cut out of what is said."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.redaction import read_token, redact, redact_urls, url_password

SECRET = "s3cret-TOKEN-0123456789abcdef"


def _file(tmp_path: Path, text: str | bytes, mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (f"reader: [{SECRET}]\nadmin: [{SECRET}x]\n", "2 lines"),
        (f"{SECRET} {SECRET}", "characters, some outside"),
        (f"{SECRET}\n{SECRET}\n", "2 lines"),
        ("\n  \n", "it is empty"),
        (SECRET.encode() + b"\xff", "not UTF-8"),
        (f"Bearer {SECRET}", "characters, some outside"),
    ],
)
def test_a_file_that_is_not_one_token_is_refused_without_its_content(
    tmp_path: Path, text: str | bytes, said: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(NfvplaceError) as refused:
        read_token(path)
    message = str(refused.value)
    assert refused.value.code == errors.USAGE_INVALID_OPTION
    assert said in message
    assert str(path) in message
    assert "fix:" in message
    assert SECRET not in message
    assert "s3cret" not in message


def test_the_tokens_file_given_as_a_token_file_is_named_as_such(tmp_path: Path) -> None:
    path = _file(tmp_path, f"reader: [{SECRET}]\n")
    with pytest.raises(NfvplaceError, match="looks like the service's tokens file"):
        read_token(path)


@pytest.mark.parametrize("text", [SECRET, f"  {SECRET}\n", "abc.DEF-ghi_jkl~mno+pq/rs=="])
def test_one_token_is_read(tmp_path: Path, text: str) -> None:
    assert read_token(_file(tmp_path, text)) == text.strip()


def test_a_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NfvplaceError, match="chmod 600"):
        read_token(_file(tmp_path, SECRET, 0o644))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://nfv:pw@db:5432/x", "postgresql://nfv:***@db:5432/x"),
        ("--db 'postgres://u:p@ss@h/d' refused", "--db 'postgres://u:***@h/d' refused"),
        ("host=db password=pw user=nfv", "host=db password=*** user=nfv"),
        ("sqlite:///x.db?password=pw&a=1", "sqlite:///x.db?password=***&a=1"),
        ("http://h:8080/v1", "http://h:8080/v1"),
    ],
)
def test_passwords_in_urls_are_hidden(text: str, expected: str) -> None:
    assert redact_urls(text) == expected


def test_redact_hides_every_secret_given_and_its_decoded_form() -> None:
    url = "postgresql://nfv:p%40ss%2Fword@db/x"
    password = url_password(url)
    assert password == "p%40ss%2Fword"
    said = redact("failed for p@ss/word and p%40ss%2Fword; token " + SECRET, password, SECRET)
    assert "p@ss/word" not in said
    assert "%40" not in said
    assert SECRET not in said
    assert url_password("not a url") is None
