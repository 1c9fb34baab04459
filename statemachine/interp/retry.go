package interp

import (
	"math"
	"strings"
	"time"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// retrier is a compiled Retry entry.
type retrier struct {
	errorEquals []string
	interval    float64 // seconds
	maxAttempts int
	backoff     float64
	maxDelay    float64 // seconds; 0 means no cap
	jitter      bool
}

func newRetrier(r *asl.Retrier) *retrier {
	out := &retrier{
		errorEquals: r.ErrorEquals,
		interval:    float64(r.Interval()),
		maxAttempts: r.Attempts(),
		backoff:     r.Backoff(),
		jitter:      r.JitterStrategy == asl.JitterFull,
	}
	if r.MaxDelaySeconds != nil {
		out.maxDelay = float64(*r.MaxDelaySeconds)
	}
	return out
}

// delay is the wait before retry number attempt (0-based):
// IntervalSeconds × BackoffRate^attempt, capped at MaxDelaySeconds, then
// with FULL jitter a uniform draw from [0, delay).
func (r *retrier) delay(attempt int, rnd func() float64) time.Duration {
	d := r.interval * math.Pow(r.backoff, float64(attempt))
	if r.maxDelay > 0 && d > r.maxDelay {
		d = r.maxDelay
	}
	if r.jitter {
		d *= rnd()
	}
	return time.Duration(d * float64(time.Second))
}

// catcher is a compiled Catch entry.
type catcher struct {
	errorEquals []string
	next        string
	result      resultPath
}

// matches applies the ASL error-matching rules:
//   - States.Runtime is terminal: no retrier or catcher matches it;
//   - States.DataLimitExceeded matches only when named (not by States.ALL);
//   - States.ALL matches every other error;
//   - States.TaskFailed matches itself and every name outside "States.";
//   - States.Timeout also matches States.HeartbeatTimeout;
//   - States.BranchFailed matches any error raised inside a Parallel branch
//     or Map iteration;
//   - any other name matches exactly.
func matches(errorEquals []string, f *failure) bool {
	if f.aborted || f.name == asl.ErrorRuntime {
		return false
	}
	for _, e := range errorEquals {
		switch {
		case e == f.name:
			return true
		case f.name == asl.ErrorDataLimitExceeded:
			continue
		case e == asl.ErrorAll:
			return true
		case e == asl.ErrorTaskFailed && !strings.HasPrefix(f.name, "States."):
			return true
		case e == asl.ErrorTimeout && f.name == asl.ErrorHeartbeatTimeout:
			return true
		case e == asl.ErrorBranchFailed && f.branch:
			return true
		}
	}
	return false
}
