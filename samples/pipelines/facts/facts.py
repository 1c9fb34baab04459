#!/usr/bin/env python3
"""Document stage: the facts a reader asks of a business document first,
taken from the document summary's entities.

Answers {"total": the largest amount, "currency": its currency,
"emails": how many distinct e-mail addresses, "first_date": the earliest
date} on stdout. With --naive it takes the first amount listed instead of
the largest and leaves the currency out: a deliberately worse version for
`docpipe eval` to tell apart (naive.yaml).

Exit 0: done; 65: the request is not what a document stage receives.
"""
import json
import sys


def amount(value):
    """'CHF 9840.00' -> ('CHF', 9840.0); None when it holds no number."""
    currency, _, number = value.partition(" ")
    try:
        return currency, float(number.replace(",", ""))
    except ValueError:
        return None


def facts(summary, naive):
    entities = summary.get("top_entities") or {}
    amounts = [a for a in (amount(e["value"]) for e in entities.get("amount", [])) if a]
    out = {
        "emails": len({e["value"] for e in entities.get("email", [])}),
        "first_date": min((e["value"] for e in entities.get("date", [])), default=None),
    }
    if amounts:
        currency, total = amounts[0] if naive else max(amounts, key=lambda a: a[1])
        out["total"] = total
        if not naive:
            out["currency"] = currency
    return out


def main():
    try:
        request = json.load(sys.stdin)
        with open(request["inputs"]["needs"]["document_summarizer"], encoding="utf-8") as f:
            summary = json.load(f)
    except (ValueError, KeyError, TypeError, OSError) as err:
        print("facts: not a document stage request with a summary: %s" % err, file=sys.stderr)
        return 65
    json.dump(facts(summary, "--naive" in sys.argv[1:]), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
