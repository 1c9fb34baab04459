package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/docpipe/docpipe/internal/redact"
)

// One-line texts of a stage's settings, as `docpipe pipeline show` and the
// dashboard's pipelines page print them; "-" stands for not set. Secrets
// in HTTP stage URLs are hidden.

// Redacted is a copy of d fit to show: its HTTP stages' URLs without
// credentials or secret-looking query values.
func (d Definition) Redacted() Definition {
	c := d.Clone()
	for i := range c.Stages {
		if u := c.Stages[i].Run.HTTP; u != "" {
			c.Stages[i].Run.HTTP = redact.URL(u)
		}
	}
	return c
}

// String is how the stage runs: "builtin ocr", "command python3 redact.py",
// "command python3 count.py (batch)", "http URL" (with "Header=$VARIABLE" for each header), "lambda NAME", "review alice,bob" or "review group G".
func (r RunSpec) String() string {
	switch r.Kind() {
	case RunBuiltin:
		return "builtin " + r.Builtin
	case RunCommand:
		if r.Batch {
			return "command " + strings.Join(r.Command, " ") + " (batch)"
		}
		return "command " + strings.Join(r.Command, " ")
	case RunHTTP:
		s := "http " + redact.URL(r.HTTP)
		for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
			s += " " + name + "=$" + r.Headers[name].Env
		}
		return s
	case RunLambda:
		return "lambda " + r.Lambda
	case RunReview:
		if r.Review.Group != "" {
			return "review group " + r.Review.Group
		}
		return "review " + orDash(strings.Join(r.Review.Assign, ","))
	}
	return "-"
}

// String lists the conditions of a When: "format=pdf language=de,en
// pages=2..10"; a nil When is "-".
func (w *When) String() string {
	if w == nil {
		return "-"
	}
	var parts []string
	if len(w.Format) > 0 {
		parts = append(parts, "format="+strings.Join(w.Format, ","))
	}
	if len(w.Language) > 0 {
		parts = append(parts, "language="+strings.Join(w.Language, ","))
	}
	if p := w.Pages; p != nil {
		hi := "-"
		if p.Max > 0 {
			hi = strconv.Itoa(p.Max)
		}
		parts = append(parts, fmt.Sprintf("pages=%d..%s", p.Min, hi))
	}
	return orDash(strings.Join(parts, " "))
}

// RetryText is the stage's transient-failure policy: "4x 1s*2 max 30s",
// or "none" when it is not retried.
func (s Stage) RetryText() string {
	if !s.Retryable || s.Retry.MaxAttempts == 0 {
		return "none"
	}
	r := s.Retry
	return fmt.Sprintf("%dx %ds*%g max %ds", r.MaxAttempts, r.IntervalSeconds, r.BackoffRate, r.MaxDelaySeconds)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
