package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/docpipe/docpipe/pipeline"
)

func init() { addCommand(newEventsCmd) }

// followInterval is how often `events --follow` looks for changes.
const followInterval = time.Second

func newEventsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events [flags] [WORKFLOW]",
		Short: "List outcome events and their delivery state",
		Long: `List the events docpipe announces (analysis.completed, analysis.failed,
analysis.rerun_started) and where each is on its way to the sinks: pending,
delivered or dead (out of attempts). Without WORKFLOW it lists the events
still pending; --failed lists the dead ones, which ` + "`docpipe events redeliver ID`" + `
sends again. --follow keeps printing changes until interrupted.`,
		Example: `  docpipe events
  docpipe events --failed
  docpipe events 01J8Z3K6Q2V4N7T1X5B9C0D2EF --json
  docpipe events --follow
  docpipe events redeliver 01J8Z3K9M0P1Q2R3S4T5V6W7XY`,
		Args: maxArgs(1, "at most one WORKFLOW"),
	}
	failed := cmd.Flags().Bool("failed", false, "list events that ran out of delivery attempts")
	follow := cmd.Flags().BoolP("follow", "f", false, "keep printing new events and state changes")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return events(cmd.Context(), a, args, *failed, *follow)
	}
	cmd.AddCommand(newRedeliverCmd(a), newEventSinksCmd(a))
	return cmd
}

func newRedeliverCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redeliver [flags] EVENT",
		Short: "Send a dead (or delivered) event again",
		Long: `Put an event back in the pending queue with fresh attempts. A dead event is
found by its id; a delivered one needs --workflow. The next relay pass
(docpipe run or work, or the relay function on AWS) delivers it.`,
		Example: `  docpipe events redeliver 01J8Z3K9M0P1Q2R3S4T5V6W7XY
  docpipe events redeliver 01J8Z3K9M0P1Q2R3S4T5V6W7XY --workflow 01J8Z3K6Q2V4N7T1X5B9C0D2EF`,
		Args: exactArgs(1, "one EVENT id"),
	}
	workflow := cmd.Flags().String("workflow", "", "the event's workflow (needed for a delivered event)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		b, err := a.openSource(ctx)
		if err != nil {
			return err
		}
		defer b.Close()
		wf := *workflow
		if wf == "" {
			e, err := b.Repo.FindDeadEvent(ctx, args[0])
			if errors.Is(err, pipeline.ErrNotFound) {
				return fmt.Errorf("no dead event %s; for a delivered one name its --workflow", args[0])
			}
			if err != nil {
				return err
			}
			wf = e.Event.WorkflowID
		}
		if err := b.Repo.RedeliverEvent(ctx, wf, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "event %s is pending again\n", args[0])
		return nil
	}
	return cmd
}

func events(ctx context.Context, a *app, args []string, failed, follow bool) error {
	b, err := a.openSource(ctx)
	if noState(err) && len(args) == 0 && !follow {
		return printEvents(a, nil)
	}
	if err != nil {
		return err
	}
	defer b.Close()
	list := func() ([]pipeline.OutboxEntry, error) {
		switch {
		case len(args) == 1:
			return b.Repo.ListWorkflowEvents(ctx, args[0])
		case failed:
			return b.Repo.ListDeadEvents(ctx, maxUnfinished)
		}
		return b.Repo.ListPendingEvents(ctx, maxUnfinished)
	}
	entries, err := list()
	if err != nil {
		return err
	}
	if !follow {
		return printEvents(a, entries)
	}
	// Follow: print each event when first seen and again whenever its
	// delivery state changes.
	seen := map[string]pipeline.EventDelivery{}
	t := time.NewTicker(followInterval)
	defer t.Stop()
	first := true
	for {
		var changed []pipeline.OutboxEntry
		for _, e := range entries {
			if d, ok := seen[e.Event.ID]; !ok || d != e.Delivery {
				seen[e.Event.ID] = e.Delivery
				changed = append(changed, e)
			}
		}
		if err := printFollowed(a, changed, first); err != nil {
			return err
		}
		first = false
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if entries, err = list(); err != nil {
			return err
		}
	}
}

func printFollowed(a *app, entries []pipeline.OutboxEntry, header bool) error {
	if a.jsonOut {
		for _, e := range entries {
			if err := writeJSONLine(a.stdout, e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(entries) == 0 {
		return nil
	}
	return writeEvents(a.stdout, entries, header)
}

// printEvents is the listing of events, as JSON or a table.
func printEvents(a *app, entries []pipeline.OutboxEntry) error {
	if a.jsonOut {
		if entries == nil {
			entries = []pipeline.OutboxEntry{}
		}
		return writeJSON(a.stdout, entries)
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no events")
		return err
	}
	return writeEvents(a.stdout, entries, true)
}

func writeEvents(w io.Writer, entries []pipeline.OutboxEntry, header bool) error {
	var t *textTable
	if header {
		t = newTextTable(w, "EVENT", "TYPE", "WORKFLOW", "FILE", "TIME", "DELIVERY", "ATTEMPTS", "LAST ERROR")
	} else {
		t = newTextTable(w)
	}
	for _, e := range entries {
		ev := e.Event
		t.row(ev.ID, ev.Type, ev.WorkflowID, ev.Document.FileName,
			localTime(pipeline.FormatTime(ev.Time)), e.Delivery.State, e.Delivery.Attempts, e.Delivery.LastError)
	}
	return t.flush()
}

// writeJSONLine prints v as one line of JSON (a stream for --follow).
func writeJSONLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
