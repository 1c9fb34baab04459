package main

import (
	"errors"

	"github.com/docpipe/docpipe/pipeline"
)

// missingError is something a command was asked about that is not in the
// state: its message names it and says where to look, and it still
// matches pipeline.ErrNotFound.
type missingError struct {
	msg string
	err error
}

func (e missingError) Error() string { return e.msg }
func (e missingError) Unwrap() error { return e.err }

// missing turns a not-found err into a missingError saying msg; other
// errors pass unchanged.
func missing(err error, msg string) error {
	if errors.Is(err, pipeline.ErrNotFound) {
		return missingError{msg: msg, err: err}
	}
	return err
}

// explain is the message printed for err: what happened and what to do,
// for the errors docpipe knows, rather than the layers the error passed
// through. Others print as they are.
func explain(err error) string {
	var refusal *pipeline.ReviewRefusal
	var m missingError
	switch {
	case errors.As(err, &m):
		return m.msg
	case errors.As(err, &refusal):
		return refusal.Reason + "; `docpipe review list` shows the reviews waiting"
	case errors.Is(err, pipeline.ErrStale):
		return "the analysis changed while this command ran (another process moved it on); " +
			"`docpipe status WORKFLOW` shows where it is now, then try again"
	}
	return err.Error()
}
