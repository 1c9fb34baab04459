#!/usr/bin/env python3
"""Segment stage: replace e-mail addresses, phone numbers and IBAN-like
numbers in the segment text with placeholders.

Reads the stage request (JSON) on stdin and answers {"text": ..., "redacted":
{...counts}} on stdout; the returned text replaces the segment text for the
stages after this one. Exit 0: done; 65: the request is not what a segment
stage receives (permanent).
"""
import json
import re
import sys

PATTERNS = [
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    # Two letters, two check digits, then 11 to 30 letters or digits, in
    # groups of four or not.
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")),
    # International or national numbers with at least 7 digits, allowing
    # spaces, dots, dashes and one group in brackets.
    ("phone", re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){2,4}(?!\w)")),
]


def redact(text):
    counts = {}
    for kind, pattern in PATTERNS:
        text, n = pattern.subn("[%s]" % kind.upper(), text)
        counts[kind] = n
    return text, counts


def main():
    try:
        request = json.load(sys.stdin)
        text = request["segment"]["text"]
    except (ValueError, KeyError, TypeError) as err:
        print("redact: not a segment stage request: %s" % err, file=sys.stderr)
        return 65
    text, counts = redact(text)
    json.dump({"text": text, "redacted": counts}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
