"""What the deploy checks share: every failure is collected, and all of them are reported at the
end, so one run shows everything a change broke."""
import os
import sys

failures = []


def check(ok, message):
    if not ok:
        failures.append(message)
    return ok


def report(success):
    """Prints every failure and returns 1, or prints `success` and returns 0 (an exit status)."""
    if failures:
        for f in failures:
            print("FAIL:", f)
        name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        print(f"{name}: {len(failures)} problem(s)")
        return 1
    print(success)
    return 0
