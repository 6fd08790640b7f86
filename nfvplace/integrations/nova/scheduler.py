"""`NfvplaceFilter` and `NfvplaceWeigher`: Nova scheduler plug-ins that ask an nfvplace service.

Enable them in nova.conf (docs/integrations/nova.md):

    [filter_scheduler]
    available_filters = nova.scheduler.filters.all_filters
    available_filters = nfvplace.integrations.nova.NfvplaceFilter
    enabled_filters = ...,NfvplaceFilter
    weight_classes = nova.scheduler.weights.all_weighers,nfvplace.integrations.nova.NfvplaceWeigher

    [nfvplace]
    url = http://nfvplace.example:8080
    token_file = /etc/nova/nfvplace.token
    timeout = 2.0
    failure_mode = reject

The filter makes one HTTP call per filtering pass (`filter_all`): the candidate `HostState`s as
CHDs and the `RequestSpec` as the Nova request document, to `POST /v1/evaluations`. It keeps the
hosts that fit; the weigher weighs them by the same answer's score (0-100), asking again only if
the filter did not run. When the service is away or slow (or refuses the token), `failure_mode`
decides: `yield` passes every host (Nova decides alone), `reject` passes none; a request the
service refuses as written (422: what `nfvplace lint` refuses, a flavor Nova never fits) passes
no host. Either way one warning line per request says why, never a traceback.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

from nova import conf
from nova.scheduler import filters, weights
from oslo_config import cfg
from oslo_log import log as logging

from .chds import SentHosts, gc_paused
from .client import EvaluatedHost, EvaluationClient, EvaluationError
from .hosts import cell_pages, host_inputs, inputs_host_id
from .pages import pages_asked
from .reach import floats_host_wide
from .requests import pins_isolated, request_document

LOG = logging.getLogger(__name__)
CONF = conf.CONF
OPTIONS = [
    cfg.StrOpt("url", help="Base URL of the nfvplace service, e.g. http://nfvplace:8080"),
    cfg.StrOpt("token_file", help="File holding a bearer token of the reader role"),
    cfg.FloatOpt("timeout", default=2.0, min=0.1, help="Seconds to wait for an answer"),
    cfg.StrOpt(
        "failure_mode",
        default="reject",
        choices=["reject", "yield"],
        help="When the service gives no answer: reject (no host passes) or yield (all pass)",
    ),
    cfg.StrOpt(
        "policy",
        default="pack",
        choices=["pack", "spread", "least-fragmentation"],
        help="nfvplace's placement policy for the score",
    ),
    cfg.FloatOpt("weight_multiplier", default=1.0, help="Multiplier of NfvplaceWeigher"),
]
CONF.register_opts(OPTIONS, group="nfvplace")

KEPT_REQUESTS = 64
SENT = SentHosts()  # each candidate host's CHD, by what Nova holds of it


_CLIENTS: dict[tuple[str, str | None, float, str], EvaluationClient] = {}


def _client() -> EvaluationClient:
    """The client of the configured service (kept: it knows which hosts the service holds)."""
    group = CONF.nfvplace
    if not group.url:
        raise EvaluationError("[nfvplace] url is not set in nova.conf")
    key = (group.url, group.token_file, group.timeout, group.policy)
    if key not in _CLIENTS:
        _CLIENTS.clear()  # the configuration changed: one client at a time
        _CLIENTS[key] = EvaluationClient(*key[:3], policy=group.policy)
    return _CLIENTS[key]


def _ask(hosts: list[Any], spec_obj: Any) -> list[EvaluatedHost]:
    """One call to the service for these hosts; raises EvaluationError. Nova's compute decides
    last: the cells where its claim refuses this request's pinned vCPUs are closed to them, and
    the answer says why. Hosts without the free hugepages the request needs on one cell are
    answered here (`pages.py`), and only the others asked."""
    with gc_paused():
        try:
            document = request_document(spec_obj)
            wide, isolate = floats_host_wide(document), pins_isolated(document)
            inputs = [host_inputs(h) for h in hosts]
            pages = pages_asked(document)
            short = (
                [pages.refusal(cell_pages(i)) for i in inputs] if pages else [None] * len(inputs)
            )
            sent = [
                SENT.of_inputs(i, wide, isolate)
                for i, r in zip(inputs, short, strict=True)
                if r is None
            ]
        except Exception as exc:  # the edge of Nova's objects: one line in the log, no traceback
            raise EvaluationError(f"cannot read the request or a host: {exc!r}") from None
        asked = (
            _client().evaluate_sent(document, [(h.id, h.ref, h.text) for h in sent]) if sent else []
        )
    for host, answer in zip(sent, asked, strict=True):
        if answer.host != host.id:
            raise EvaluationError(f"the answer names {answer.host!r} where {host.id!r} was")
    answered = iter(
        replace(a, reasons=(*a.reasons, h.closed)) if h.closed and not a.fits else a
        for a, h in zip(asked, sent, strict=True)
    )
    return [
        next(answered) if reason is None else EvaluatedHost(inputs_host_id(i), False, 0, (reason,))
        for i, reason in zip(inputs, short, strict=True)
    ]


class _LastAnswers:
    """The filter's answers per request, for the weigher that runs right after it. A request is
    kept by identity (the entry holds it, so its id is not reused while kept)."""

    def __init__(self) -> None:
        # answers None: asked, and no answer came (already logged: the weigher does not ask again)
        self.kept: OrderedDict[int, tuple[Any, dict[tuple[str, str], EvaluatedHost] | None]] = (
            OrderedDict()
        )

    def keep(self, spec_obj: Any, hosts: list[Any], answers: list[EvaluatedHost] | None) -> None:
        by_host = None if answers is None else dict(zip(map(_key, hosts), answers, strict=True))
        self.kept[id(spec_obj)] = (spec_obj, by_host)
        self.kept.move_to_end(id(spec_obj))
        while len(self.kept) > KEPT_REQUESTS:
            self.kept.popitem(last=False)

    def _entry(self, spec_obj: Any) -> tuple[bool, dict[tuple[str, str], EvaluatedHost] | None]:
        """(asked, answers) for this very request."""
        found = self.kept.get(id(spec_obj))
        if found is None or found[0] is not spec_obj:
            return False, None
        return True, found[1]

    def failed(self, spec_obj: Any) -> bool:
        asked, answers = self._entry(spec_obj)
        return asked and answers is None

    def get(self, spec_obj: Any, host: Any) -> EvaluatedHost | None:
        return (self._entry(spec_obj)[1] or {}).get(_key(host))


LAST = _LastAnswers()


def _key(host: Any) -> tuple[str, str]:
    return (str(host.host), str(getattr(host, "nodename", "")))


def _uuid(spec_obj: Any) -> str:
    return str(getattr(spec_obj, "instance_uuid", None) or "-")


def _set_limits(host: Any, spec_obj: Any) -> None:
    """The compute's NUMA claim checks shared guests' CPUs and memory per cell against
    `limits['numa_topology']`, which NUMATopologyFilter sets on the hosts it passes: the same
    limits when it did not run (the docs still keep it: it also prunes allocation candidates)."""
    if "numa_topology" in host.limits or not getattr(spec_obj, "numa_topology", None):
        return
    if not getattr(host, "numa_topology", None):
        return
    from nova import objects

    limits = objects.NUMATopologyLimits(
        cpu_allocation_ratio=host.cpu_allocation_ratio,
        ram_allocation_ratio=host.ram_allocation_ratio,
    )
    if "network_metadata" in spec_obj and spec_obj.network_metadata:
        limits.network_metadata = spec_obj.network_metadata
    host.limits["numa_topology"] = limits


class NfvplaceFilter(filters.BaseHostFilter):  # type: ignore[misc]
    """Passes the hosts nfvplace says the VM fits on (one call per filtering pass)."""

    RUN_ON_REBUILD = False

    def filter_all(self, filter_obj_list: Any, spec_obj: Any) -> list[Any]:
        hosts = list(filter_obj_list)
        if not hosts:
            return hosts
        from nova.scheduler import utils

        if utils.request_is_rebuild(spec_obj):
            return hosts  # the instance stays where it is: nothing to decide
        try:
            answers = _ask(hosts, spec_obj)
        except EvaluationError as exc:
            LAST.keep(spec_obj, hosts, None)
            mode = "reject" if exc.refused else CONF.nfvplace.failure_mode
            LOG.warning(
                "nfvplace gave no answer for instance %s (%s); %s: %s",
                _uuid(spec_obj),
                exc,
                "the request is refused" if exc.refused else f"failure_mode={mode}",
                f"passing all {len(hosts)} hosts" if mode == "yield" else "passing no host",
            )
            return hosts if mode == "yield" else []
        LAST.keep(spec_obj, hosts, answers)
        passing = [h for h, a in zip(hosts, answers, strict=True) if a.fits]
        for host in passing:
            _set_limits(host, spec_obj)
        refused = [
            f"{a.host}: {'; '.join(a.reasons) or 'does not fit'}" for a in answers if not a.fits
        ]
        LOG.info(
            "nfvplace: %d of %d hosts fit instance %s%s",
            len(passing),
            len(hosts),
            _uuid(spec_obj),
            (" (" + " | ".join(refused[:5]) + (" ..." if len(refused) > 5 else "") + ")")
            if refused
            else "",
        )
        return passing


class NfvplaceWeigher(weights.BaseHostWeigher):  # type: ignore[misc]
    """Weighs hosts by nfvplace's score (0-100, higher is better under its policy)."""

    def weight_multiplier(self, host_state: Any) -> float:
        return float(CONF.nfvplace.weight_multiplier)

    def weigh_objects(self, weighed_obj_list: Any, weight_properties: Any) -> list[float]:
        hosts = [w.obj for w in weighed_obj_list]
        if LAST.failed(weight_properties):  # the filter got no answer, and said so
            return [0.0] * len(hosts)
        answers = [LAST.get(weight_properties, h) for h in hosts]
        if any(a is None for a in answers):  # the filter did not run for these hosts
            try:
                asked = _ask(hosts, weight_properties)
                LAST.keep(weight_properties, hosts, asked)
                answers = list(asked)
            except EvaluationError as exc:
                LOG.warning(
                    "nfvplace gave no scores for instance %s (%s): weights 0",
                    _uuid(weight_properties),
                    exc,
                )
                return [0.0] * len(hosts)
        return [float(a.score) if a is not None else 0.0 for a in answers]

    def _weigh_object(self, host_state: Any, weight_properties: Any) -> float:
        answer = LAST.get(weight_properties, host_state)
        return float(answer.score) if answer is not None else 0.0
