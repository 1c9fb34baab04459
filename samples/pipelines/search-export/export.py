#!/usr/bin/env python3
"""Document stage: cut the document's segment texts into chunks and write
them as JSON Lines ({"id", "workflow_id", "index", "text"} per line) for a
search index.

The segment texts come from the output files of the stages this one needs
(request["inputs"]["needs"]): every JSON object in them with an integer
"index" and a string "text" is a segment. A segment stage's output is JSON
Lines (a .jsonl file, one segment a line), a document stage's one JSON
value. Chunks go to
exports/<workflow_id>.jsonl (the command runs in the pipeline's folder);
stdout answers {"path": ..., "chunks": N}.

Exit 0: done; 75: the export folder cannot be written now (transient, the
stage is retried); 65: the request or an input is unusable (permanent).
"""
import json
import os
import sys

CHUNK_CHARS = 1000


def segments(value, found):
    """Collect {index: text} from any JSON value, however nested."""
    if isinstance(value, dict):
        if isinstance(value.get("index"), int) and isinstance(value.get("text"), str):
            found.setdefault(value["index"], value["text"])
        for v in value.values():
            segments(v, found)
    elif isinstance(value, list):
        for v in value:
            segments(v, found)
    return found


def chunks(text, size=CHUNK_CHARS):
    """Split on paragraphs, packing them up to size characters; a longer
    paragraph is cut at the last space before the limit."""
    out, current = [], ""
    for para in (p.strip() for p in text.split("\n\n")):
        while len(para) > size:
            cut = para.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            out.append(para[:cut].strip())
            para = para[cut:].strip()
        if current and len(current) + 2 + len(para) > size:
            out.append(current)
            current = ""
        if para:
            current = current + "\n\n" + para if current else para
    if current:
        out.append(current)
    return out


def main():
    try:
        request = json.load(sys.stdin)
        workflow = request["workflow_id"]
        needs = request.get("inputs", {}).get("needs", {})
        found = {}
        for path in needs.values():
            with open(path, encoding="utf-8") as f:
                if path.endswith(".jsonl"):
                    for line in f:
                        if line.strip():
                            segments(json.loads(line), found)
                else:
                    segments(json.load(f), found)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        print("search_export: unusable input: %s" % err, file=sys.stderr)
        return 65
    path = os.path.join("exports", "%s.jsonl" % workflow)
    n = 0
    try:
        os.makedirs("exports", exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            for index in sorted(found):
                for k, text in enumerate(chunks(found[index])):
                    line = {"id": "%s-%06d-%03d" % (workflow, index, k), "workflow_id": workflow, "index": index, "text": text}
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                    n += 1
        os.replace(path + ".tmp", path)  # readers never see half a file
    except OSError as err:
        print("search_export: writing %s: %s" % (path, err), file=sys.stderr)
        return 75
    json.dump({"path": os.path.abspath(path), "chunks": n}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
