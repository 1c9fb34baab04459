// Package stagerun runs users' own pipeline stages: a local command
// (run: {command: [argv...]}), an HTTP service (run: {http: URL}) or a
// Lambda function (run: {lambda: ARN}). Each is a Runner; all three keep
// the same contract, which users write their programs against.
//
// # Input
//
// The stage receives one JSON object: a command on stdin, an HTTP
// service as the body of a POST with Content-Type: application/json, a
// Lambda function as its payload.
//
//	{
//	  "workflow_id": "01J...",
//	  "project":  {"id": "...", "name": "...", "language": "de", "document_prompt": "...",
//	               "ocr": {"enabled": true, "languages": ["deu"]}},
//	  "document": {"id": "...", "file_name": "report.pdf", "format": "pdf", "language": "en", "pages": 12},
//	  "stage":    "redact",
//	  "scope":    "document" | "segment",
//	  "settings": {...the stage's own settings: from the pipeline file...},
//	  "segment":  {"index": 3, "text": "..."},
//	  "inputs":   {...},
//	  "inputs_inline": {...}
//	}
//
// "project" carries the project's settings (`docpipe project set`):
// its language ("" to detect), its document prompt and its OCR choice.
// "settings" are the stage's own `settings:` map from the pipeline file,
// as written there ({} when it has none). "segment"
// is present for segment scope only. "language" is left out when unknown.
//
// A command reads its inputs from local files the runner's caller has
// written to a temporary folder:
//
//	"inputs": {
//	  "source":       "/tmp/.../report.pdf",      the original document
//	  "segment_text": "/tmp/.../segment.txt",     segment scope only
//	  "needs":        {"ocr": "/tmp/.../ocr.json"} each needed stage's output
//	}
//
// A needed document stage's output file holds the JSON it returned (for a
// builtin: segment_prep's prep.json, format_parser's {format, language,
// pages}, graph_builder's graph, document_summarizer's summary). A needed
// segment stage gives a document stage every segment's text as that stage
// left it, as JSON Lines in index order, one segment a line (segments
// failed by then are left out):
//
//	{"index": 1, "text": "...", "output": {...the stage's output for it...}}
//
// ("output" is the stage's answer for the segment: a user's stage's JSON,
// segment_analyzer's analysis, an AI stage's answer). A segment stage that
// needs another segment stage gets that stage's output for the same
// segment.
//
// An HTTP service or a Lambda function cannot read those files, so it
// gets no paths: the segment text is in "segment", each needed stage's
// output is sent inline as the JSON it returned, and the original
// document is sent only as a URL to fetch, when the caller has one:
//
//	"inputs":        {"source_url": "https://..."},
//	"inputs_inline": {"needs": {"ocr": {...its output...}}}
//
// A needed segment stage's segments arrive inline as one JSON array of
// the same objects.
//
// The whole request with its inline needs must stay under 6 MB
// (DefaultMaxInline, Lambda's limit for a synchronous payload).
//
// # Output
//
// The stage answers with JSON: a command on stdout, a service as a 2xx
// response body, a function as its return value. Output that is not JSON
// fails the stage permanently ("stage output is not JSON: ..."); output
// over 64 MB (DefaultMaxOutput) too ("output too large"). The caller
// stores the output as the stage's result. A segment-scope stage may
// answer an object with a string "text" ({"text": "...", ...}): that text
// replaces the segment text the later stages see (Result.Text).
//
// # Success and failure
//
//	done       exit 0           HTTP 2xx                   no FunctionError
//	transient  exit 75          HTTP 429, 5xx; connection  FunctionError with errorType
//	           (EX_TEMPFAIL)    refused, reset or timed    TransientError or
//	                            out                        Sandbox.Timedout; throttling
//	permanent  any other exit,  any other status (4xx),    any other FunctionError
//	           killed by a      a certificate the client
//	           signal           refuses
//
// A transient failure is a *steperr.TransientError: the state machine
// retries it as the stage's retry policy says. A permanent one is a
// *steperr.StageFailedError and is not retried. The reason names the
// stage and ends with the last lines (at most 2 KB) of the command's
// stderr or of the response body, e.g.
//
//	redact: exit status 3: Traceback (most recent call last): ... ValueError: bad input
//	redact: HTTP 400 Bad Request: {"error": "missing field"}
//
// # Progress
//
// A long document-scope command can say how far it is: a line of its own
// on stderr
//
//	{"progress": {"done": 120, "total": 400, "unit": "rows"}}
//
// with 0 <= done <= total and total > 0 ("unit" is optional). The runner
// hands each report to Request.Progress and keeps it out of the stderr
// tail a failure's reason quotes; any other line, or one with other
// fields, is log output. docpipe records the latest report on the step
// item at most once a second, and the dashboard and `docpipe run` show it
// with the time left ("redact 120/400 rows, ETA 40s"). A command may
// revise the total as it goes; the first report's unit stays. Segment
// stages report nothing this way (their progress is the segments
// finished), and neither do HTTP services and Lambda functions, which
// answer only once.
//
// # Timeouts and cancellation
//
// Each stage has a timeout. Running past it is transient ("redact: timed
// out after 60s"), so the stage's retry policy decides what happens
// next. A command runs in its own process group; on timeout, or when the
// caller cancels, the group gets SIGTERM and, 5 seconds later (Grace),
// SIGKILL, so the children a command started die with it. Whatever is
// left in the group when the command exits is killed as well. When the
// caller cancels, Run returns the context's error, unclassified.
//
// # Batch mode
//
// A segment-scope command stage may run in batch mode
// (run: {command: [...], batch: true}): one process per batch of
// segments instead of one per segment, so a Python stage does not pay an
// interpreter start for every segment (BatchCommand). The process reads
// one request a line on stdin, each the object a single-mode command gets
// (with its "segment"), and stdin ends after the batch's last request. It
// writes one answer a line on stdout, in any order:
//
//	{"index": 3, "words": 120}            segment 3's output: {"words": 120}
//	{"index": 4, "text": "...", ...}      a string "text" replaces the segment text
//	{"index": 5, "error": "bad input"}    segment 5 fails alone, permanently
//
// The answer without its "index" is the segment's output, byte for byte
// as written, as a single-mode command's stdout would be. Blank lines are
// ignored. A program answers as it goes and flushes each line, e.g. in
// Python:
//
//	import json, sys
//	for line in sys.stdin:
//	    req = json.loads(line)
//	    seg = req["segment"]
//	    print(json.dumps({"index": seg["index"], "words": len(seg["text"].split())}), flush=True)
//
// Every segment of the batch gets exactly one outcome:
//
//   - The process exits 75 (EX_TEMPFAIL): the whole batch fails
//     transiently and is retried as the stage's retry policy says, answers
//     included.
//   - It exits with another status, is killed by a signal, or exits 0
//     before answering every segment: the answers it gave stand, and every
//     segment it did not answer fails permanently with the exit status
//     and the tail of stderr ("redact: exit status 1: Traceback ...";
//     "redact: exited without answering").
//   - A line that is not one JSON object, has no whole-number "index",
//     names a segment not in the batch or answers one a second time breaks
//     the protocol: the process is stopped (as on timeout), the answers
//     before that line stand, and every segment not answered fails with a
//     reason naming the line ("redact: answer line 7 has no "index": ...").
//   - The stage's timeout bounds the wait for each answer, from the start
//     to the first and from each answer to the next, not the whole batch:
//     past it the process is stopped and the whole batch fails
//     transiently ("redact: timed out after 60s without an answer").
//   - stdout is bounded: a line over 16 MB (DefaultMaxAnswer) breaks the
//     protocol; past 64 MB in all the process is killed and the segments
//     not answered fail ("output too large").
//   - Once every segment is answered the process should exit; it has
//     Grace (5 seconds) to do so before it is stopped, its answers intact.
//
// A segment stage in batch mode reports no progress; all of stderr is log.
//
// # Command environment
//
// A command runs in the pipeline file's folder, so "python3 redact.py"
// and "./redact.sh" resolve next to the pipeline file. It does not
// inherit docpipe's environment, which holds its credentials (AWS_*,
// DOCPIPE_TOKEN, DOCPIPE_WEBHOOK_SECRET): it gets PATH, HOME, LANG,
// LC_ALL, TMPDIR and TZ when docpipe has them, the variables the stage
// names in the pipeline file
//
//	env: [OPENAI_API_KEY, REDACT_RULES]
//
// (Program.Env; a name docpipe does not have is left out), and
// DOCPIPE_STAGE (the stage name) and DOCPIPE_WORKFLOW_ID.
//
// # HTTP requests
//
// An HTTP stage is one POST with Accept: application/json and
// User-Agent: docpipe/<version>. Redirects are followed as net/http does
// by default. The pipeline's author chooses the URL, so it may be any
// address the runner reaches, loopback and private ones included.
//
// A credential belongs in a header, not the URL: the pipeline file names
// the environment variable that holds each header's value, and the
// runner reads it at every request (HTTP.HeaderEnv):
//
//	run:
//	  http: https://classifier.example.com/run
//	  headers:
//	    Authorization: {env: CLASSIFIER_AUTH}   # e.g. "Bearer ..."
//
// An unset variable fails the stage permanently, before anything is sent.
// Header names must be valid and not ones docpipe sets (Host,
// Content-Type, Content-Length and the hop-by-hop ones). Wherever a stage's
// URL is shown (pipeline show, the dashboard, errors) its user information
// and secret-looking query values (key, token, sig, X-Amz-Signature, ...)
// are replaced by REDACTED; headers are shown by variable name only.
package stagerun
