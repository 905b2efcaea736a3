#!/usr/bin/env python3
"""Lists the tests of a ctest run that did not run, each with its reason.

    skipped_tests.py JUNIT_XML

JUNIT_XML is what `ctest --output-junit FILE` wrote (CMake >= 3.21): every test with its status
and its output. A test that cannot run here says why in a line with the marker
"FIELDBRAIN-SKIPPED: " (test/support/skip.h, test/CMakeLists.txt); one CTest skipped for
another reason is listed with CTest's. Prints a count and one line per test; nothing when every
test ran.
"""
import sys
import xml.etree.ElementTree as ElementTree

MARKER = "FIELDBRAIN-SKIPPED: "


def not_run(junit_path):
    """[(name, reason)] for every test of the run that did not run, in run order."""
    out = []
    for case in ElementTree.parse(junit_path).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if case.get("status") != "notrun" and skipped is None:
            continue
        reason = None
        output = case.findtext("system-out") or ""
        for line in output.splitlines():
            at = line.find(MARKER)
            if at >= 0:
                reason = line[at + len(MARKER):].strip()
                break
        if reason is None:
            why = skipped.get("message") if skipped is not None else case.get("status")
            reason = f"no reason printed (CTest: {why})"
        out.append((case.get("name"), reason))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    tests = not_run(sys.argv[1])
    if tests:
        print(f"{len(tests)} tests did not run:")
        for name, reason in tests:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
