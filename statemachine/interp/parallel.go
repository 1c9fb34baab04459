package interp

import (
	"context"
	"errors"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// failErr carries a failure through errgroup. Its text is what the
// sibling branches' tasks see as their context's cause: the failure's
// cause, or its name when it has none.
type failErr struct{ f *failure }

func (e failErr) Error() string {
	if e.f.cause != "" {
		return e.f.cause
	}
	return e.f.name
}

// asFailure unwraps a failErr, treating anything else as an abort.
func asFailure(ctx context.Context, err error) *failure {
	var fe failErr
	if errors.As(err, &fe) && !fe.f.aborted {
		return fe.f
	}
	return abortFailure(ctx)
}

// parallel runs every branch on its own goroutine. The first branch to fail
// cancels the others and its error becomes the state's error (matched also
// by States.BranchFailed). Output is the branch outputs in branch order.
func (n *node) parallel(ctx context.Context, env *evalEnv, in any) (any, *failure) {
	ex := env.ex
	ex.emit(Event{Type: ParallelStateStarted, State: n.name, StateType: n.kind})
	results := make([]any, len(n.branches))
	g, gctx := errgroup.WithContext(ctx)
	for i, b := range n.branches {
		g.Go(func() error {
			out, f := b.run(gctx, ex, in)
			if f != nil {
				return failErr{f}
			}
			results[i] = out
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, abortFailure(ctx)
		}
		f := asFailure(ctx, err)
		branchFailure := *f
		branchFailure.branch = true
		ex.emit(Event{Type: ParallelStateFailed, State: n.name, StateType: n.kind, Error: f.name, Cause: f.cause})
		return nil, &branchFailure
	}
	ex.emit(Event{Type: ParallelStateSucceeded, State: n.name, StateType: n.kind})
	return results, nil
}

// forEach calls fn for indices [0, count) on at most limit goroutines. The
// first error cancels the rest; fn must check its ctx.
func forEach(ctx context.Context, count, limit int, fn func(ctx context.Context, i int) error) error {
	if count == 0 {
		return nil
	}
	workers := min(limit, count)
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range workers {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= count || gctx.Err() != nil {
					return nil
				}
				if err := fn(gctx, i); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}
