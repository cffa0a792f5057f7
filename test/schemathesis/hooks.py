"""Schemathesis hooks of the conformance test (test/schemathesis.test.ts).

They keep the tester's own session alive and its traffic on this machine, send what a request
would carry where a generated one cannot be sent as made (both act-on-behalf headers, which
OpenAPI cannot say exclude each other; a multipart file that is not text), and accept that
soft-deleted things stay readable; they exclude nothing else. Schemathesis revalidates a case a
hook changed, so a changed case is judged by what is sent.
"""

import ast
import json
import os
import re
import threading

import schemathesis

# Hypothesis reads the source of a filter's lambda with `ast.parse` to name it. Python 3.11 keeps
# the depth count of turning a parsed tree into objects in one place for all threads, so two
# workers parsing at once fail with "SystemError: AST constructor recursion depth mismatch" (or a
# flaky test): one parse at a time.
_parse = ast.parse
_parsing = threading.Lock()


def _one_parse_at_a_time(*args, **kwargs):
    with _parsing:
        return _parse(*args, **kwargs)


ast.parse = _one_parse_at_a_time

# The administrator whose token the tester sends (GET /users/me of that token).
TESTER_ID = int(os.environ["KN_TESTER_USER_ID"])
# An id no user has: ids are int4, the system makes a few hundred.
NOBODY = 2147483647
# Nothing listens on the discard port: a delivery fails at once, without leaving the machine.
LOOPBACK_WEBHOOK = "http://127.0.0.1:9/webhook"


def may_be_http_url(value):
    """Whether a URL parser could read `value` as http(s): WHATWG drops tabs and newlines anywhere
    and controls and spaces at either end, and ignores case."""
    return re.sub(r"[\t\n\r]", "", value).lstrip("".join(map(chr, range(33)))).lower().startswith(("http:", "https:"))


def names_tester(value):
    """Whether a path id names the tester (the service reads "0001" as 1)."""
    try:
        return int(str(value)) == TESTER_ID
    except ValueError:
        return False


# Deleting these is soft, as docs/content.md and docs/api.md say: a deleted question or solution
# stays readable to its author and content administrators (is_deleted: true), who may restore it;
# a deleted user's name stays on what they wrote. A later read answering 200 is that design.
SOFT_DELETES = {"DELETE /questions/{id}", "DELETE /solutions/{id}", "DELETE /users/{id}"}


RANGE_OPERATIONS = {"getAnalyticsFlow", "getRoutingAnalytics", "getAnalyticsGaps", "getAnalyticsReuse"}
# packages/contracts/src/analytics.ts: the form of `from` and `to`, and the longest range per granularity.
DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,3})?)?Z)?$")
MAX_RANGE_DAYS = {"day": 5 * 366, "week": 20 * 366, "month": 50 * 366}


def days_since_epoch(value):
    """Days (fractional) of a date of the contract's form, counted as JavaScript's Date.parse does
    (a day past the month's end rolls over), so year 0 and 31 February read as the service reads them."""
    parts = DATE.match(value).groups()
    year, month, day = int(parts[0]), int(parts[1]), int(parts[2])
    hours, minutes = int(parts[4] or 0), int(parts[5] or 0)
    seconds = float(parts[7] or 0) + float(parts[8] or 0)
    # Days from 1970-01-01 to the first of the month (proleptic Gregorian), then the day's offset.
    y, m = (year, month) if month > 2 else (year - 1, month + 12)
    first = 365 * y + y // 4 - y // 100 + y // 400 + (153 * (m - 3) + 2) // 5 - 719468
    return first + (day - 1) + (hours * 3600 + minutes * 60 + seconds) / 86400


def range_taken(query):
    """Whether the contract's range rule takes the query's `from` and `to` (False when either is of the wrong form)."""
    dates = [query.get(name) for name in ("from", "to")]
    if not all(isinstance(d, str) and DATE.match(d) for d in dates):
        return False
    days = days_since_epoch(dates[1]) - days_since_epoch(dates[0])
    return 0 < days <= MAX_RANGE_DAYS.get(query.get("granularity", "week"), MAX_RANGE_DAYS["week"])


@schemathesis.hook
def filter_failure(context, failure, case, response):
    return not (failure.code == "ST301" and failure.operation in SOFT_DELETES)


@schemathesis.hook
def before_call(context, case, kwargs):
    operation = case.operation.definition.raw.get("operationId")
    if case.headers:
        headers = case.headers.copy()
        # A link puts the user id it read from an answer into X-On-Behalf-Of-User-Id as a number,
        # which the HTTP library refuses to send: a header is text.
        for name, value in headers.items():
            if isinstance(value, int) and not isinstance(value, bool):
                headers[name] = str(value)
        # The two act-on-behalf headers exclude each other (400 MultipleOnBehalfHeaders), which
        # OpenAPI cannot say of two optional parameters: a request carries one, the user id (which a
        # link from POST /users sets). Dropped here rather than filtered out: Hypothesis ends a
        # stateful run early when many of its tries are refused.
        sent = {name.lower(): name for name in headers}
        if "x-on-behalf-of-user-id" in sent and "x-on-behalf-of-email" in sent:
            del headers[sent["x-on-behalf-of-email"]]
        if headers != case.headers:
            case.headers = headers
    # A multipart part is bytes: a file generated as null or a number arrives as its text ("null",
    # "5"), a valid file. It is sent as that text, and judged as what it is.
    multipart = (case.media_type or "").startswith("multipart/") and isinstance(case.body, dict)
    if multipart and "file" in case.body and not isinstance(case.body["file"], (str, bytes)):
        case.body = {**case.body, "file": json.dumps(case.body["file"])}
    # Changing or deleting the tester's own account (its roles, say) would end its session: every
    # later request 401 or 403. Every other id stays as generated.
    if operation in ("updateUser", "deleteUser") and names_tester(case.path_parameters.get("id")):
        case.path_parameters = {**case.path_parameters, "id": NOBODY}
    # The analytics ranges: `to` after `from` and at most so many days per granularity, which
    # OpenAPI cannot say of two parameters (400 with the reason, as the contract has it). A pair the
    # rule refuses becomes one it takes; a value of the wrong form stays as generated.
    if operation in RANGE_OPERATIONS and isinstance(case.query, dict) and not range_taken(case.query):
        if all(isinstance(case.query.get(name), str) and DATE.match(case.query[name]) for name in ("from", "to")):
            case.query = {**case.query, "from": "2026-01-05", "to": "2026-03-02"}
    if operation == "updateNetworkSettings" and isinstance(case.body, dict):
        body = dict(case.body)
        # A webhook the network may deliver to stays on this machine (the tests send no traffic elsewhere).
        url = body.get("webhook_url")
        if isinstance(url, str) and may_be_http_url(url):
            body["webhook_url"] = LOOPBACK_WEBHOOK
        # A rate limit the tester would run into ends its session as surely: the limits stay off.
        for limit in ("rate_limit_per_minute", "login_attempts_per_minute"):
            if isinstance(body.get(limit), int) and not isinstance(body.get(limit), bool):
                body[limit] = 0
        case.body = body
