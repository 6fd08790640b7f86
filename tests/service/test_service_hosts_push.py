"""`nfvplace hosts push` against a real `nfvplace serve`, and the client it is built on."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from service_support import TOKENS, Server, auth

from nfvplace import errors
from nfvplace.errors import NfvplaceError
from nfvplace.service.client import Client, read_token


def push(server: Server, *paths: Path, token: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "nfvplace", "hosts", "push", "--server", server.url]
    argv += ["--token-file", str(token), *map(str, paths)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def token_file(folder: Path, role: str = "host-agent") -> Path:
    path = folder / f"{role}.token"
    path.write_text(TOKENS[role][0] + "\n")
    path.chmod(0o600)
    return path


def test_a_folder_of_hosts_is_registered_and_replaced(
    sqlite_url: str, serve: Callable[..., Server], root: Path, tmp_path: Path
) -> None:
    server = serve(sqlite_url)
    fleet = root / "examples" / "fleet"
    ids = sorted(yaml.safe_load(p.read_text())["id"] for p in fleet.glob("*.yaml"))
    first = push(server, fleet, token=token_file(tmp_path))
    assert first.returncode == 0, first.stderr
    assert sorted(line.split(":")[0] for line in first.stdout.splitlines()) == ids
    assert all(": created, generation 1" in line for line in first.stdout.splitlines())
    assert f"{len(ids)} of {len(ids)} hosts registered" in first.stderr
    listed = httpx.get(server.url + "/v1/hosts", headers=auth("reader")).json()["hosts"]
    assert sorted(h["id"] for h in listed) == ids
    again = push(server, fleet / "compute-01.yaml", token=token_file(tmp_path))
    assert again.stdout.strip() == "compute-01: replaced, generation 1"  # the same report
    changed = yaml.safe_load((fleet / "compute-01.yaml").read_text())
    changed["labels"] = {**changed.get("labels", {}), "rack": "r9"}
    (tmp_path / "compute-01.yaml").write_text(yaml.safe_dump(changed))
    again = push(server, tmp_path / "compute-01.yaml", token=token_file(tmp_path))
    assert again.stdout.strip() == "compute-01: replaced, generation 2"


def test_a_bad_file_is_one_error_and_the_others_go_on(
    sqlite_url: str, serve: Callable[..., Server], root: Path, tmp_path: Path
) -> None:
    server = serve(sqlite_url)
    folder = tmp_path / "hosts"
    folder.mkdir()
    good = yaml.safe_load((root / "examples" / "fleet" / "compute-01.yaml").read_text())
    (folder / "good.yaml").write_text(yaml.safe_dump(good))
    (folder / "broken.yaml").write_text("schema: nfvplace/chd/v1\nid: [unclosed\n")
    vm = root / "examples" / "vms" / "cloud-vm.yaml"
    (folder / "a-vm.yaml").write_text(vm.read_text())
    result = push(server, folder, token=token_file(tmp_path))
    assert result.returncode == 1
    assert result.stdout.strip() == "compute-01: created, generation 1"
    errors_seen = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors_seen) == 2, result.stderr
    assert any("broken.yaml" in line and "nfvplace.input.syntax" in line for line in errors_seen)
    assert any("a-vm.yaml" in line and "not a host" in line for line in errors_seen)
    assert "1 of 3 hosts registered" in result.stderr
    refused = push(server, folder / "good.yaml", token=token_file(tmp_path, "reader"))
    assert refused.returncode == 1
    assert "nfvplace.service.forbidden" in refused.stderr


def test_a_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    path = token_file(tmp_path)
    assert read_token(path) == TOKENS["host-agent"][0]
    path.chmod(0o644)
    with pytest.raises(NfvplaceError, match="chmod 600") as refused:
        read_token(path)
    assert refused.value.code == errors.USAGE_INVALID_OPTION


class Flaky(http.server.BaseHTTPRequestHandler):
    """Answers 503 (Retry-After: 2) to the first request, then 201: a database coming back."""

    answers = [(503, {"code": "nfvplace.store.unavailable"}), (201, {"generation": 1})]
    seen: list[str] = []

    def do_PUT(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(self.headers["Authorization"])
        status, body = self.answers.pop(0)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 503:
            self.send_header("Retry-After", "2")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_client_waits_out_a_503_and_gives_up_on_no_answer(flaky: str, root: Path) -> None:
    from nfvplace.reader import load_file

    waits: list[float] = []
    client = Client(flaky + "/", "t-0123456789abcdef", sleep=waits.append)
    chd = load_file(root / "examples" / "fleet" / "compute-01.yaml")
    reply = client.put_host(chd)  # type: ignore[arg-type]
    assert (reply.status, reply.body) == (201, {"generation": 1})
    assert waits == [2.0]  # as Retry-After said
    assert Flaky.seen == ["Bearer t-0123456789abcdef"] * 2
    nobody = Client("http://127.0.0.1:9", sleep=waits.append, attempts=3)
    with pytest.raises(NfvplaceError) as unreachable:
        nobody.request("GET", "/readyz")
    assert unreachable.value.code == errors.CLIENT_UNREACHABLE
    assert len(waits) == 1 + 2  # two waits before the third and last try
    posted = Client("http://127.0.0.1:9", sleep=waits.append, attempts=3)
    with pytest.raises(NfvplaceError):
        posted.request("POST", "/v1/placements", body=b"{}")  # no key: never sent twice
    assert len(waits) == 3
