"""Secrets never leave: a known token and a known database password are planted, and every door
they reach (the command line, the library, a real `nfvplace serve` over HTTP, its logs and its
metrics) is searched for them."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from nfvplace.errors import NfvplaceError
from nfvplace.service.client import token_from
from nfvplace.service.settings import load_tokens
from tests.live_serve import serve

ROOT = Path(__file__).resolve().parents[1]
READER, PLACER = "reader-SECRET-0123456789", "placer-SECRET-0123456789"
AGENT, ADMIN = "agent-SECRET-0123456789", "admin-SECRET-0123456789"
TOKENS = {"reader": [READER], "placer": [PLACER], "host-agent": [AGENT], "admin": [ADMIN]}
PASSWORD = "PW-SECRET-42"


def _tokens_file(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "tokens.yaml"
    body = "".join(f"{role}: [{tokens[0]}]\n" for role, tokens in TOKENS.items())
    path.write_text(body if text is None else text)
    path.chmod(0o600)
    return path


def _nfvplace(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nfvplace", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=ROOT,
    )


def _clean(text: str) -> None:
    assert "SECRET" not in text, text


def test_the_agent_given_the_tokens_file_refuses_it_without_a_token(tmp_path: Path) -> None:
    done = _nfvplace(
        "agent", "--server", "http://127.0.0.1:9", "--token-file", str(_tokens_file(tmp_path))
    )
    assert done.returncode == 2
    assert "not one bearer token" in done.stderr
    assert "tokens file" in done.stderr
    _clean(done.stdout + done.stderr)


def test_hosts_push_given_the_tokens_file_refuses_it_without_a_token(tmp_path: Path) -> None:
    done = _nfvplace(
        "hosts",
        "push",
        str(ROOT / "examples" / "hosts"),
        "--server",
        "http://127.0.0.1:9",
        "--token-file",
        str(_tokens_file(tmp_path)),
    )
    assert done.returncode == 2, done.stderr
    _clean(done.stdout + done.stderr)


def test_the_agent_once_says_what_failed_and_exits(tmp_path: Path) -> None:
    token = tmp_path / "agent.token"
    token.write_text(AGENT)
    token.chmod(0o600)
    done = _nfvplace(
        "agent", "--server", "http://127.0.0.1:9", "--token-file", str(token), "--once"
    )
    assert done.returncode == 1
    assert "[nfvplace.agent.unreachable]" in done.stderr
    assert "again in" not in done.stderr
    assert "exiting 1" in done.stderr
    _clean(done.stdout + done.stderr)


@pytest.mark.parametrize(
    "text",
    [
        f"reader: [{READER}\nadmin: [{ADMIN}]\n",  # a YAML error: PyYAML quotes the line
        f"{READER}: reader\n",  # written the other way round: the token is a key
        f"reader: ['{READER} {ADMIN}']\n",  # a token a header cannot carry
        f"reader: [{READER}]\nplacer: [{READER}]\n",  # the same token twice
    ],
)
def test_a_bad_tokens_file_is_refused_without_a_token(tmp_path: Path, text: str) -> None:
    path = _tokens_file(tmp_path, text)
    with pytest.raises(NfvplaceError) as refused:
        load_tokens(path)
    _clean(str(refused.value))
    done = _nfvplace("serve", "--tokens", str(path), "--port", "1")
    assert done.returncode == 2
    _clean(done.stdout + done.stderr)


@pytest.mark.parametrize(
    "url",
    [
        f"nfv:{PASSWORD}@db/nfvplace",  # no scheme: not a URL
        f"postgresql://nfv:{PASSWORD}@127.0.0.1:notaport/nfvplace",
        f"mysql://nfv:{PASSWORD}@127.0.0.1/nfvplace",
        f"postgresql://nfv:{PASSWORD}@127.0.0.1:1/nfvplace",  # nothing listens
    ],
)
def test_a_database_password_is_never_said(url: str) -> None:
    done = _nfvplace("serve", "--no-auth", "--db", url, "--port", "1", timeout=60)
    assert done.returncode != 0
    assert PASSWORD not in done.stdout + done.stderr, done.stderr
    assert "***" in done.stderr or "nfv:" not in done.stderr


def test_a_token_in_the_environment_is_one_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NFVPLACE_TOKEN", f"{READER}\n{ADMIN}")
    with pytest.raises(NfvplaceError) as refused:
        token_from(None)
    _clean(str(refused.value))
    monkeypatch.setenv("NFVPLACE_TOKEN", f" {READER}\n")
    assert token_from(None) == READER


def _ask(url: str, token: str, path: str = "/v1/hosts", body: bytes | None = None) -> str:
    request = urllib.request.Request(
        url + path, data=body, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return str(answer.read().decode())
    except urllib.error.HTTPError as exc:
        return str(exc.read().decode())


def test_no_answer_log_or_metric_of_the_service_carries_a_token(tmp_path: Path) -> None:
    wrong = "wrong-SECRET-0123456789"
    with serve(tmp_path, TOKENS) as url:
        said = [
            _ask(url, wrong),
            _ask(url, wrong + " " + ADMIN),
            _ask(url, READER, "/v1/placements", b'{"vm": "' + PLACER.encode() + b'"}'),
            _ask(url, READER, f"/v1/hosts?token={ADMIN}"),
        ]
        # a token a caller put in a path is said back to that caller only: never logged
        assert AGENT in _ask(url, PLACER, f"/v1/hosts/{AGENT}")
        # the agent of this host, with a token of a role that may not report: refused (403)
        token = tmp_path / "reader.token"
        token.write_text(READER)
        token.chmod(0o600)
        agent = _nfvplace(
            "agent",
            "--server",
            url,
            "--token-file",
            str(token),
            "--once",
            "--set",
            "hypervisor.capabilities=[cpu_pinning]",
        )
        metrics = _ask(url, ADMIN, "/metrics")
    assert agent.returncode == 1
    assert "nfvplace.service.forbidden" in agent.stderr
    assert "nfvplace_" in metrics
    for text in [*said, agent.stdout, agent.stderr, metrics, (tmp_path / "serve.log").read_text()]:
        for token_given in [wrong, READER, PLACER, AGENT, ADMIN]:
            assert token_given not in text, text


def test_the_nova_filter_never_says_its_token_file(tmp_path: Path) -> None:
    from nfvplace.integrations.nova.client import EvaluationClient, EvaluationError

    token = tmp_path / "nova.token"
    token.write_text(f"reader: [{READER}]\nadmin: [{ADMIN}]\n")
    client = EvaluationClient("http://127.0.0.1:9", str(token), timeout=1)
    with pytest.raises(EvaluationError) as failed:
        client.evaluate({"name": "f", "vcpus": 1, "ram": 512}, [{"id": "h"}])
    _clean(str(failed.value))
