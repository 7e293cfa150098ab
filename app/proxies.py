"""Which peers may speak for the client: ``LAYOUTLAB_TRUSTED_PROXIES``, and the client address the app keys on.

``X-Forwarded-For`` / ``X-Forwarded-Proto`` are honoured only when the connection comes from an address named in
LAYOUTLAB_TRUSTED_PROXIES (comma-separated addresses or CIDR networks, e.g. ``127.0.0.1,10.0.0.0/8``; ``*`` trusts
every peer, for a port that only the proxy can reach). None is trusted by default, so a client cannot pick its own
address with a header: uvicorn's own default trusts 127.0.0.1, and rotating the header from loopback escaped the
lab's per-address rate limit. ``layoutlab serve`` (app.serve) wraps the app in uvicorn's ProxyHeadersMiddleware for
these peers only, which rewrites the client address and scheme, and gives gunicorn's ``forwarded_allow_ips`` the same
list; ``uvicorn_options`` gives the same settings to a plain uvicorn (the tests' in-process server).
"""

from __future__ import annotations

import ipaddress
import os

ENV = "LAYOUTLAB_TRUSTED_PROXIES"


class ProxySettingError(ValueError):
    """LAYOUTLAB_TRUSTED_PROXIES names something that is not an address or a network."""


def trusted_proxies(value: str | None = None) -> list[str]:
    """The trusted peers of ``value`` (default: the environment), normalized (``10.0.0.0/8``, ``::1``); empty when
    unset or blank. Raises ProxySettingError naming the first entry that is not an IP address, a network or ``*``."""
    raw = os.environ.get(ENV, "") if value is None else value
    out: list[str] = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        if item == "*":
            out.append(item)
            continue
        try:
            out.append(str(ipaddress.ip_network(item, strict=False)) if "/" in item else
                       str(ipaddress.ip_address(item)))
        except ValueError:
            raise ProxySettingError(f"{ENV}: {item[:80]!r} is not an IP address, a CIDR network or '*'") from None
    return out


def uvicorn_options(value: str | None = None) -> dict[str, object]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config``: proxy headers off when no peer is trusted,
    else on and trusted from exactly those peers."""
    trusted = trusted_proxies(value)
    if not trusted:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(trusted)}


def client_address(request) -> str | None:
    """The client's address: the TCP peer, or the address a trusted proxy forwarded (the server has already put it
    in ``request.client`` for trusted peers only). The app never reads ``X-Forwarded-For`` itself."""
    return request.client.host if request.client else None
