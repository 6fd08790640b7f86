"""`nfvplace agent` against a real `nfvplace serve`, discovering this machine: it registers the host,
keeps a placement's claim across its reports, reports drift (a placement with no running domain, a
domain the inventory does not hold) as log lines and a metric, retries with backoff while the
service is away, sends nothing when discovery fails, and exits 0 on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_serve import serve

ROOT = Path(__file__).resolve().parents[2]
AGENT, ADMIN = "agent-token-0123456789", "admin-token-0123456789"
HOST = "agent-test-host"


def _get(url: str, path: str) -> tuple[int, Any]:
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {ADMIN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def _post(url: str, path: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


class Agent:
    def __init__(self, folder: Path, server: str, *extra: str, interval: int = 1) -> None:
        token = folder / "agent.token"
        token.write_text(AGENT + "\n")
        token.chmod(0o600)
        self.log = folder / "agent.log"
        self.metrics = folder / "agent.prom"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nfvplace",
                "agent",
                "--server",
                server,
                "--token-file",
                str(token),
                "--interval",
                str(interval),
                "--id",
                HOST,
                "--metrics-file",
                str(self.metrics),
                "--set",
                "hypervisor.capabilities=[cpu_pinning]",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, words: str, count: int = 1, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.text().count(words) >= count:
                return
            assert self.process.poll() is None, self.text()
            time.sleep(0.2)
        raise AssertionError(f"no {words!r} in the agent's log:\n{self.text()}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with serve(tmp_path, {"host-agent": [AGENT], "admin": [ADMIN]}) as url:
        yield url


def test_the_agent_keeps_the_host_current_claims_kept_drift_reported(
    service: str, tmp_path: Path
) -> None:
    domains = tmp_path / "domains"
    domains.mkdir()
    agent = Agent(tmp_path, service, "--libvirt-xml", str(domains))
    try:
        agent.wait_for("reported agent-test-host")
        status, host = _get(service, f"/v1/hosts/{HOST}")
        assert status == 200
        assert host["chd"]["provenance"]["source"] == "live"
        vm = {
            "schema": "nfvplace/vmd/v1",
            "name": "small",
            "cpu_thread_policy": "prefer",
            "cpu_sets": [{"id": 0, "vcpus": [0], "memory_mib": 256}],
        }
        status, placed = _post(service, "/v1/placements", {"vm": vm})
        assert status == 201, placed
        (config,) = placed["configurations"]
        (pu,) = config["cpu_sets"][0]["vcpu_pins"].values()
        reports = agent.text().count("reported agent-test-host")
        agent.wait_for("reported agent-test-host", reports + 2)
        _, host = _get(service, f"/v1/hosts/{HOST}")
        cpu = next(c for n in host["chd"]["numa_nodes"] for c in n["cpus"] if c["id"] == pu)
        assert (cpu["state"], cpu["owner"]) == ("dedicated", config["instance"])  # kept
        assert _get(service, f"/v1/placements/{placed['id']}")[0] == 200
        assert f"PU {pu} is held by '{config['instance']}' in the inventory" in agent.text()
        assert (
            'nfvplace_agent_drift{resource="pu",side="inventory_only"} 1.0'
            in agent.metrics.read_text()
        )
        # the VM starts, from the domain XML nfvplace renders for it: no drift, no conflict
        _, rendered = _get(service, f"/v1/placements/{placed['id']}/render?format=libvirt")
        (domains / "small.xml").write_text(rendered["renders"][0]["text"])
        agent.wait_for("0 drift finding(s), 0 conflict(s)", 2)
        (domains / "small.xml").unlink()
        # a VM the inventory does not know holds the PU: named, and the claim's conflict too
        (domains / "other.xml").write_text(
            f"<domain><name>stray</name><cputune><vcpupin vcpu='0' cpuset='{pu}'/></cputune></domain>"
        )
        agent.wait_for("used by running domain 'stray'")
    finally:
        assert agent.stop() == 0, agent.text()
    assert "stopped" in agent.text()
    assert "Traceback" not in agent.text()


def test_the_agent_waits_for_the_service_with_backoff_and_stops_on_sigterm(tmp_path: Path) -> None:
    agent = Agent(tmp_path, "http://127.0.0.1:9", interval=30)
    agent.wait_for("[nfvplace.agent.unreachable]", 3, timeout=60)
    lines = [line for line in agent.text().splitlines() if " again in " in line]
    waits = [float(line.split(" again in ")[1].split(" s")[0]) for line in lines]
    assert waits[0] < 1.3 < waits[1] < 2.5 < waits[2] < 5  # 1 s, 2 s, 4 s (with jitter)
    started = time.monotonic()
    assert agent.stop() == 0  # while it waits
    assert time.monotonic() - started < 5


def test_nothing_is_sent_when_discovery_fails(service: str, tmp_path: Path) -> None:
    agent = Agent(tmp_path, service, "--sysfs-root", str(tmp_path / "nowhere"), "--once")
    assert agent.process.wait(timeout=60) == 1
    assert "nothing sent" in agent.text()
    assert _get(service, f"/v1/hosts/{HOST}")[0] == 404


def test_a_bad_token_file_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nfvplace",
            "agent",
            "--server",
            "http://127.0.0.1:9",
            "--token-file",
            str(tmp_path / "missing"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "--token-file" in done.stderr
