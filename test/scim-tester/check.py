"""Runs scim2-tester against a live /scim/v2 (test/scim-tester.test.ts): every check, and prints
each result as a JSON line ({status, title, reason, resource_type}) for the test to judge.

Usage: check.py <base URL of /scim/v2> (the provisioning token in SCIM_TOKEN).
"""

import json
import os
import sys

from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import check_server

base_url = sys.argv[1]
http = Client(base_url=base_url, headers={"Authorization": f"Bearer {os.environ['SCIM_TOKEN']}"}, timeout=30)
client = SyncSCIMClient(http)
for result in check_server(client, raise_exceptions=False):
    print(
        json.dumps(
            {
                "status": result.status.name,
                "title": result.title,
                "reason": result.reason,
                "resource_type": result.resource_type,
            }
        ),
        flush=True,
    )
