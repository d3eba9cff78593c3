"""resolver/client_address.py: the client's address, X-Forwarded-For only from a proxy the operator names.

Case by case, without a request: what the throttles behind each door make of
it is in tests/hostile/test_forwarded.py.
"""
from __future__ import annotations

import pytest

from resolver.client_address import client_address


@pytest.mark.parametrize("trusted, meta, address", [
    ([], {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}, "127.0.0.1"),
    (["127.0.0.1"], {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}, "198.51.100.1"),
    (["127.0.0.1"], {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.1:4711"}, "198.51.100.1"),
    (["127.0.0.1", "10.0.0.0/8"], {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "1.1.1.1, 2.2.2.2, 10.1.2.3"},
     "2.2.2.2"),
    (["::1"], {"REMOTE_ADDR": "::1", "HTTP_X_FORWARDED_FOR": "[2001:db8::7]:443"}, "2001:db8::7"),
    (["127.0.0.1"], {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "not-an-address"}, "127.0.0.1"),
    (["127.0.0.1"], {"REMOTE_ADDR": "127.0.0.1"}, "127.0.0.1"),
    ("127.0.0.1, 10.0.0.0/8", {"REMOTE_ADDR": "10.9.9.9", "HTTP_X_FORWARDED_FOR": "198.51.100.2"}, "198.51.100.2"),
])
def test_client_address__the_rule(settings, trusted, meta, address):
    settings.RESOLVER = {**settings.RESOLVER, "TRUSTED_PROXIES": trusted}
    assert client_address(meta) == address
