"""Pure helpers of the store and the service."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from service_hosts import host, vm

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.loading import SourceDocument
from nfvplace.service.lint_adapter import lint_findings
from nfvplace.service.metrics import PhaseClock
from nfvplace.service.placing import PlacementRequest
from nfvplace.service.settings import Settings
from nfvplace.store.availability import derive
from nfvplace.store.db import normalise_url
from nfvplace.store.resources import Held, held_resources, pool_capacity, shares_held

CONFIG = VmConfiguration.model_validate(
    {
        "vm": "vm",
        "instance": "pl-1/vm",
        "host": "h1",
        "cpu_sets": [
            {
                "id": 0,
                "numa_node": 1,
                "vcpu_pins": {"0": 9, "1": 10},
                "memory_mib": 2048,
                "hugepages": {"size_kib": 1048576, "count": 2},
                "reserved_siblings": [13],
            }
        ],
        "emulator_pins": [11],
        "interfaces": [
            {"name": "a", "mode": "sriov", "pci_address": "0000:58:02.1"},
            {"name": "b", "mode": "dedicated", "pci_address": "0000:58:00.0"},
            {"name": "c", "mode": "vswitch"},
        ],
        "pci_devices": [{"pci_address": "0000:3D:00.0", "class": "crypto", "numa_node": 1}],
    }
)


def test_held_resources_names_every_exclusive_resource() -> None:
    data = CONFIG.model_dump(mode="json", by_alias=True)
    data["cpu_sets"][0]["cache_ways"] = {"domain": 1, "first_way": 8, "ways": 2}
    assert sorted(held_resources(VmConfiguration.model_validate(data))) == sorted(
        [
            Held("h1", "pu", "9"),
            Held("h1", "pu", "10"),
            Held("h1", "pu", "11"),
            Held("h1", "pu", "13"),
            Held("h1", "vf", "0000:58:02.1"),
            Held("h1", "port", "0000:58:00.0"),
            Held("h1", "pci", "0000:3d:00.0"),  # lower case: addresses compare case-blind
            Held("h1", "cache_way", "1/8"),  # each way of the cpu-set's L3 cache
            Held("h1", "cache_way", "1/9"),
        ]
    )


def test_shares_held_and_capacity() -> None:
    assert shares_held([CONFIG, CONFIG]) == Counter({("h1", 1, 1048576): 4})
    chd = ComputeHostDescriptor.model_validate(host("h1", pages_1g=3))
    assert pool_capacity(chd) == {(0, 1048576): 3, (1, 1048576): 3}


def test_derive_counts_what_the_agent_shows_once() -> None:
    """An agent that reports a placement's VM (as owner of its PUs and VF, with its hugepages and
    memory in `used`) gets it released from the report once, then claimed: nothing twice."""
    data = host("h1", vfs=2)
    node = data["numa_nodes"][1]
    mine, theirs = node["cpus"][1], node["cpus"][2]
    mine.update(state="dedicated", owner=CONFIG.owner)
    theirs.update(state="dedicated", owner="theirs")
    node["nics"][0]["ports"][0]["vfs"][1].update(in_use=True, owner=CONFIG.owner)
    node["memory"]["hugepages"][0]["used"] = 3  # 2 of the placement + 1 of another VM
    node["memory"]["normal"] = {"used_mib": 2048}
    sliced = CONFIG.model_copy(update={"interfaces": CONFIG.interfaces[:1], "pci_devices": ()})
    sliced = sliced.model_copy(update={"emulator_pins": ()})
    config = sliced.model_copy(
        update={
            "cpu_sets": (
                sliced.cpu_sets[0].model_copy(
                    update={"vcpu_pins": {0: mine["id"]}, "reserved_siblings": ()}
                ),
            )
        }
    )
    reported = ComputeHostDescriptor.model_validate(data)
    derived = derive(reported, [config])
    assert derived.conflicts == ()
    pool = derived.availability.node(1).memory.hugepages[0]
    assert (pool.total, pool.used) == (4, 3)  # not 5: the placement's 2 pages counted once
    assert pool_capacity(derived.base)[(1, 1048576)] == 3  # free without the placement
    assert derived.availability.node(1).memory.normal.used_mib == 2048
    cpus = {c.id: c for c in derived.availability.cpus}
    assert cpus[mine["id"]].owner == CONFIG.owner
    assert cpus[theirs["id"]].owner == "theirs"
    # an agent that does not show the placement (VM not started): its usage is added once
    clean = ComputeHostDescriptor.model_validate(host("h1", vfs=2))
    assert derive(clean, [config]).availability.node(1).memory.hugepages[0].used == 2


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_normalise_url(url: str, expected: str) -> None:
    assert normalise_url(url) == expected


def test_request_hash_ignores_key_order() -> None:
    a = PlacementRequest(descriptor=None, body={"vm": vm(), "dry_run": False})  # type: ignore[arg-type]
    b = PlacementRequest(descriptor=None, body={"dry_run": False, "vm": vm()})  # type: ignore[arg-type]
    c = PlacementRequest(descriptor=None, body={"vm": vm(vcpus=3)})  # type: ignore[arg-type]
    assert a.request_hash == b.request_hash != c.request_hash


def test_lint_adapter_falls_back_to_schema_findings() -> None:
    bad = vm()
    bad["cpu_sets"][0]["memory"] = 1
    findings = lint_findings(SourceDocument(data=bad, source="x.yaml"))
    assert any(finding["severity"] == "error" for finding in findings)
    assert {"rule", "severity", "file", "path", "message"} <= set(findings[0])
    assert findings[0]["file"] == "x.yaml"
    unknown = lint_findings(SourceDocument(data={"schema": "nfvplace/vdm/v1"}, source="y"))
    assert "did you mean 'nfvplace/vmd/v1'?" in str(unknown[0]["hint"])


def test_settings_round_trip_without_secrets() -> None:
    settings = Settings(db_url="sqlite:///x.db", tokens={"admin": ["a" * 20]}, tokens_file="t.yaml")
    again = Settings.from_json(settings.to_json())
    assert again.tokens is None  # workers read the tokens file; secrets stay out of the env
    assert again.tokens_file == "t.yaml"
    assert again.db_url == "sqlite:///x.db"


def test_logs_are_json_lines_with_the_request_id() -> None:
    import json
    import logging

    from nfvplace.service.logs import JsonFormatter, request_id_var

    token = request_id_var.set("req-7")
    try:
        record = logging.makeLogRecord(
            {"name": "nfvplace.service", "levelname": "INFO", "msg": "placed", "placement": "pl-1"}
        )
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id_var.reset(token)
    assert line["msg"] == "placed"
    assert line["request_id"] == "req-7"
    assert line["placement"] == "pl-1"
    assert line["level"] == "info"


def test_lean_log_records_skip_the_caller_and_the_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the JSON line never writes is not looked up per record (the caller's file and line
    walk the stack); the line is the same."""
    import json
    import logging

    from nfvplace.service.logs import JsonFormatter, keep_lines_lean

    for name in ("_srcfile", "logThreads", "logProcesses", "logMultiprocessing", "logAsyncioTasks"):
        monkeypatch.setattr(logging, name, getattr(logging, name))  # restored after the test
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("nfvplace.test-lean")
    monkeypatch.setattr(logger, "handle", records.append)
    logger.warning("before", extra={"placement": "pl-1"})
    keep_lines_lean()
    logger.warning("after", extra={"placement": "pl-1"})
    before, after = records
    assert before.lineno > 0
    assert before.threadName is not None
    assert after.lineno == 0
    assert after.funcName == "(unknown function)"
    assert after.threadName is None
    assert after.processName is None
    assert after.process is None
    lines = [json.loads(JsonFormatter().format(r)) for r in records]
    assert [{k: v for k, v in line.items() if k not in ("ts", "msg")} for line in lines] == [
        {"level": "warning", "logger": "nfvplace.test-lean", "placement": "pl-1"}
    ] * 2


def test_default_database_is_sqlite_in_the_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nfvplace.store.db import default_url

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    url = default_url()
    assert url == f"sqlite:///{tmp_path / 'nfvplace' / 'nfvplace.db'}"
    assert (tmp_path / "nfvplace").is_dir()


def test_phase_clock_charges_no_phase_with_its_own_charge() -> None:
    """A charge that takes CPU (a counter in a shared file) lands in no phase, not in the next:
    the engine's phase of a placement is the engine's, not the refresh's metric."""
    charged: list[tuple[str, float]] = []

    def charge(phase: str, seconds: float) -> None:
        charged.append((phase, seconds))
        deadline = time.thread_time() + 0.05
        while time.thread_time() < deadline:  # a slow charge
            pass

    clock = PhaseClock(charge)
    clock.start()
    clock.spent("refresh")
    clock.charge_spent()
    clock.start()
    clock.spent("engine")
    clock.charge_spent()
    assert [phase for phase, _ in charged] == ["refresh", "engine"]
    assert charged[1][1] < 0.01  # without the refresh's charge (0.05 s)


def test_phase_clock_reads_the_clock_once_a_mark_and_charges_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mark reads `thread_time` once (a system call) and charges nothing; `charge_spent`
    charges each phase spent since, once, its marks added up, in the order first spent."""
    ticks = iter([1.0, 1.5, 1.75, 3.0, 3.5, 10.0])
    reads: list[float] = []

    def thread_time() -> float:
        reads.append(next(ticks))
        return reads[-1]

    monkeypatch.setattr(time, "thread_time", thread_time)
    charged: list[tuple[str, float]] = []
    clock = PhaseClock(lambda phase, seconds: charged.append((phase, seconds)))
    clock.start()
    clock.spent("refresh")
    clock.spent("refresh")
    clock.spent("engine")
    clock.spent("index")
    assert charged == []
    assert len(reads) == 5
    clock.charge_spent()
    assert charged == [("refresh", 0.75), ("engine", 1.25), ("index", 0.5)]
    clock.charge_spent()  # nothing spent since
    assert len(charged) == 3
    assert len(reads) == 5


def test_metrics_count_outcomes_and_latencies_on_the_children_labels_gives() -> None:
    """`placed` and `answered` keep each label set's child: the registry's samples are what
    `labels(...).inc()` and `labels(...).observe()` make, a child per label set."""
    from nfvplace.service.metrics import Metrics

    metrics, plain = Metrics(), Metrics()
    for outcome in ("placed", "no_fit", "placed", "dry_run", "placed"):
        metrics.placed(outcome)
        plain.placements.labels(outcome).inc()
    for method, route, status, seconds in (
        ("POST", "/v1/placements", "201", 0.004),
        ("POST", "/v1/placements", "409", 0.03),
        ("GET", "unmatched", "404", 0.0001),
        ("POST", "/v1/placements", "201", 2.0),
    ):
        metrics.answered(method, route, status, seconds)
        plain.latency.labels(method, route, status).observe(seconds)
    assert metrics.placements.labels("placed") is metrics._outcomes["placed"]
    assert len(metrics._latencies) == 3

    def samples(m: Metrics) -> list[tuple[str, dict[str, str], float]]:
        return [
            (s.name, s.labels, s.value)
            for family in m.registry.collect()
            for s in family.samples
            if not s.name.endswith("_created")
        ]

    assert samples(metrics) == samples(plain)
    assert ("nfvplace_placements_total", {"outcome": "placed"}, 3.0) in samples(metrics)


def test_ids_are_uuid4_hex() -> None:
    """A request's and a placement's random id: 32 hex digits, UUID version 4 of RFC 4122, as
    `uuid.uuid4().hex`; no two alike."""
    import uuid

    from nfvplace.service.ids import uuid4_hex

    ids = [uuid4_hex() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for made in ids:
        parsed = uuid.UUID(hex=made)
        assert parsed.hex == made
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_the_middleware_reads_the_request_id_and_length_as_a_headers_dict_would() -> None:
    """X-Request-Id and Content-Length read from the raw headers as the dict of every header,
    decoded and lower-cased, reads them: any case, the last one sent twice, "" when not sent, a
    name of the same length that is another header's, a value not ASCII."""
    from nfvplace.service.middleware import _request_id_and_length

    cases = [
        [],
        [(b"host", b"h"), (b"content-length", b"612")],
        [(b"X-Request-ID", b"abc"), (b"Content-Length", b"7")],
        [(b"x-request-id", b"one"), (b"x-request-id", b"two")],
        [(b"x-request-ix", b"no"), (b"content-lengtx", b"9"), (b"x-request-id", b"\xe9t\xe9")],
        [(b"content-length", b"1"), (b"content-length", b"2"), (b"authorization", b"x")],
    ]
    for headers in cases:
        whole = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        expected = (whole.get("x-request-id", ""), whole.get("content-length", ""))
        assert _request_id_and_length(headers) == expected
