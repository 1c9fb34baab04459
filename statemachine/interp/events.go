package interp

import (
	"sync"
	"time"
)

// EventType names a history event.
type EventType string

// History event types.
const (
	ExecutionStarted   EventType = "ExecutionStarted"
	ExecutionSucceeded EventType = "ExecutionSucceeded"
	ExecutionFailed    EventType = "ExecutionFailed"
	ExecutionAborted   EventType = "ExecutionAborted"
	ExecutionTimedOut  EventType = "ExecutionTimedOut"

	StateEntered EventType = "StateEntered"
	StateExited  EventType = "StateExited"

	TaskScheduled EventType = "TaskScheduled"
	TaskSucceeded EventType = "TaskSucceeded"
	TaskFailed    EventType = "TaskFailed"
	TaskTimedOut  EventType = "TaskTimedOut"
	// TaskRetryScheduled precedes the backoff sleep of a retry.
	TaskRetryScheduled EventType = "RetryScheduled"
	// ErrorCaught records a Catch transition.
	ErrorCaught EventType = "ErrorCaught"

	WaitStarted EventType = "WaitStarted"

	ParallelStateStarted   EventType = "ParallelStateStarted"
	ParallelStateSucceeded EventType = "ParallelStateSucceeded"
	ParallelStateFailed    EventType = "ParallelStateFailed"

	MapStateStarted   EventType = "MapStateStarted"
	MapStateSucceeded EventType = "MapStateSucceeded"
	MapStateFailed    EventType = "MapStateFailed"

	MapRunStarted   EventType = "MapRunStarted"
	MapRunSucceeded EventType = "MapRunSucceeded"
	MapRunFailed    EventType = "MapRunFailed"

	MapIterationStarted   EventType = "MapIterationStarted"
	MapIterationSucceeded EventType = "MapIterationSucceeded"
	MapIterationFailed    EventType = "MapIterationFailed"
)

// Event is one history event. IDs increase by one per execution (child
// executions of a distributed Map share their parent's sequence).
type Event struct {
	ID   int64
	Type EventType
	Time time.Time // from the engine's clock
	// Execution is the id of the (child) execution the event belongs to.
	Execution string
	State     string // state name, for state-level events
	StateType string
	Resource  string // task resource
	Index     int    // Map iteration index; -1 when not applicable
	Error     string
	Cause     string
}

// history numbers events and delivers them one at a time, so a callback
// sees ids in order even when Map and Parallel emit concurrently.
type history struct {
	mu    sync.Mutex
	seq   int64
	fn    func(Event)
	clock Clock
}

// emit records an event of this execution.
func (ex *execution) emit(ev Event) {
	ev.Index = ex.index
	ex.record(ev)
}

// record records an event whose Index the caller set.
func (ex *execution) record(ev Event) {
	h := ex.hist
	if h.fn == nil {
		return
	}
	ev.Execution = ex.id
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev.ID = h.seq
	ev.Time = h.clock.Now()
	h.fn(ev)
}
