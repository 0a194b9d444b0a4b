#!/bin/bash
# run-pytest.sh: the Python client's tests (tests/python/test_*.py) as TAP,
# for make check (Makefile.am: TESTS, through the TAP driver).
#
# By hand, from the source tree after the build:
#   PERFGATE=build/agent/perfgate tests/python/run-pytest.sh
# or straight with pytest (any of its options):
#   PERFGATE=build/agent/perfgate python3 -m pytest tests/python
#
# The first of $PYTHON (configure's), python3 and /usr/bin/python3 that
# can import pytest runs the tests (Debian: python3-pytest).  The package
# is taken from clients/python in the source tree.  Each test case is one
# TAP line; pytest's own output follows as comments.  The whole run is
# bounded by PYTEST_TIMEOUT seconds (default 600).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${SRCDIR:-$(cd "$here/../.." && pwd)}

py=
for cand in ${PYTHON:+"$PYTHON"} python3 /usr/bin/python3; do
	if [ "$cand" != : ] && "$cand" -c 'import pytest' >/dev/null 2>&1; then
		py=$cand
		break
	fi
done
if [ -z "$py" ]; then
	echo "Bail out! no Python with pytest (tried ${PYTHON:+$PYTHON, }python3, /usr/bin/python3): install python3-pytest (./bootstrap does)"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-pytest.XXXXXXXXXX") || exit 1
trap 'rm -rf -- "$tmp"' EXIT

rc=0
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$src/clients/python${PYTHONPATH:+:$PYTHONPATH} SRCDIR=$src \
	timeout -k 10 "${PYTEST_TIMEOUT:-600}" "$py" -m pytest -p no:cacheprovider -rfE \
	--basetemp="$tmp/base" --junitxml="$tmp/junit.xml" -o junit_family=xunit2 \
	"$here" >"$tmp/out" 2>&1 || rc=$?

"$py" - "$tmp/junit.xml" "$tmp/out" "$rc" <<'PY'
import sys
import xml.etree.ElementTree as ET

junit, out, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    cases = list(ET.parse(junit).getroot().iter("testcase"))
except (OSError, ET.ParseError) as e:
    cases = []
    print(f"# no JUnit report: {e}")
print(f"1..{len(cases)}")
for n, case in enumerate(cases, 1):
    name = case.get("classname", "").replace(".", "/") + ".py::" + case.get("name", "")
    bad = case.find("failure")
    if bad is None:
        bad = case.find("error")
    skip = case.find("skipped")
    if bad is not None:
        print(f"not ok {n} - {name}")
        for line in (bad.get("message") or "").splitlines()[:20]:
            print(f"#   {line}")
    elif skip is not None:
        print(f"ok {n} - {name} # SKIP {skip.get('message', '')}")
    else:
        print(f"ok {n} - {name}")
with open(out, errors="replace") as f:
    for line in f:
        print("# " + line.rstrip("\n"))
if rc not in (0, 1) or not cases:
    print(f"Bail out! pytest exited with status {rc}")
PY
