package asl

import "fmt"

func (v *validator) retryCatch(where string, m *Machine, retry []Retrier, catch []Catcher) {
	for i, r := range retry {
		v.retrier(fmt.Sprintf("%s.Retry[%d]", where, i), r, i == len(retry)-1)
	}
	for i, c := range catch {
		cw := fmt.Sprintf("%s.Catch[%d]", where, i)
		v.errorEquals(cw, c.ErrorEquals, i == len(catch)-1)
		if c.Next == "" {
			v.add(join(cw, "Next"), "is required")
		} else {
			v.target(join(cw, "Next"), m, c.Next)
		}
		v.resultPath(join(cw, "ResultPath"), c.ResultPath)
	}
}

func (v *validator) retrier(where string, r Retrier, last bool) {
	v.errorEquals(where, r.ErrorEquals, last)
	if r.MaxAttempts != nil && *r.MaxAttempts < 0 {
		v.add(join(where, "MaxAttempts"), "must be ≥ 0, got %d", *r.MaxAttempts)
	}
	if r.MaxAttempts != nil && *r.MaxAttempts > 99999999 {
		v.add(join(where, "MaxAttempts"), "must be ≤ 99999999, got %d", *r.MaxAttempts)
	}
	if r.IntervalSeconds != nil && (*r.IntervalSeconds < 1 || *r.IntervalSeconds > 99999999) {
		v.add(join(where, "IntervalSeconds"), "must be between 1 and 99999999, got %d", *r.IntervalSeconds)
	}
	if r.BackoffRate != nil && *r.BackoffRate < 1 {
		v.add(join(where, "BackoffRate"), "must be ≥ 1.0, got %g", *r.BackoffRate)
	}
	if r.MaxDelaySeconds != nil && (*r.MaxDelaySeconds < 1 || *r.MaxDelaySeconds > 31622400) {
		v.add(join(where, "MaxDelaySeconds"), "must be between 1 and 31622400, got %d", *r.MaxDelaySeconds)
	}
	if r.JitterStrategy != "" && r.JitterStrategy != JitterFull && r.JitterStrategy != JitterNone {
		v.add(join(where, "JitterStrategy"), "must be FULL or NONE, got %q", r.JitterStrategy)
	}
}

// errorEquals checks an ErrorEquals list: States.ALL stands alone, in the
// last retrier or catcher.
func (v *validator) errorEquals(where string, names []string, last bool) {
	if len(names) == 0 {
		v.add(join(where, "ErrorEquals"), "must list at least one error name")
	}
	for i, n := range names {
		if n == "" {
			v.add(fmt.Sprintf("%s.ErrorEquals[%d]", where, i), "error name is empty")
		}
		if n == ErrorAll {
			if len(names) != 1 {
				v.add(join(where, "ErrorEquals"), "States.ALL must appear alone")
			}
			if !last {
				v.add(join(where, "ErrorEquals"), "States.ALL must be in the last retrier or catcher")
			}
		}
	}
}
