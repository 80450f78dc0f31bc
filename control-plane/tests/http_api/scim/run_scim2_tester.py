"""Runs scim2-tester (PyPI, pinned by the Rust test that starts this) against a SCIM service.

Usage: python run_scim2_tester.py BASE_URL TOKEN
Prints one line per check, then a summary; exits 1 when any check reports an error.
"""

import sys

import httpx2
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

base_url, token = sys.argv[1], sys.argv[2]
http = httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
results = check_server(SyncSCIMClient(http))
failures = [result for result in results if result.status in (Status.ERROR, Status.CRITICAL)]
for result in results:
    reason = (result.reason or "").replace("\n", " ")
    print(f"{result.status.name:<10} {result.resource_type or '-':<6} {result.title}: {reason}")
    if result in failures and result.data is not None:
        print(f"           data: {result.data!r}"[:2000])
print(f"scim2-tester: {len(results)} checks, {len(failures)} with an error")
sys.exit(1 if failures else 0)
