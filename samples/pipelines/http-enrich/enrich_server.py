#!/usr/bin/env python3
"""A small enrichment service for the enrich stage: POST /enrich with the
stage request as JSON answers reading statistics of the document, computed
from the document description and the inlined output of the stages it
needs (request["inputs_inline"]["needs"]).

Answers 200 with JSON; 400 (a permanent failure of the stage) for a body
that is not a stage request; 404 for other paths. docpipe retries 5xx and
refused connections, so a restart of this service is harmless.

    python3 enrich_server.py [--port 8089]
"""
import argparse
import json
import re
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
WORDS_PER_MINUTE = 230


def texts(value):
    """Every string under a "text" or "summary" key, however nested."""
    if isinstance(value, dict):
        for key, v in value.items():
            if key in ("text", "summary") and isinstance(v, str):
                yield v
            else:
                yield from texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)


def enrich(request):
    doc = request.get("document", {})
    needs = (request.get("inputs_inline") or {}).get("needs", {})
    words = [w.lower() for t in texts(needs) for w in WORD.findall(t)]
    return {
        "file_name": doc.get("file_name"),
        "pages": doc.get("pages"),
        "words": len(words),
        "reading_minutes": round(len(words) / WORDS_PER_MINUTE, 1),
        "top_words": [w for w, _ in Counter(words).most_common(10)],
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/enrich":
            return self.answer(404, {"error": "no such path"})
        try:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            if not isinstance(request, dict) or "workflow_id" not in request:
                raise ValueError("not a stage request")
        except ValueError as err:
            return self.answer(400, {"error": str(err)})
        self.answer(200, enrich(request))

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8089)
    args = parser.parse_args()
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
