// Command docpipe runs docpipe's document pipeline on one machine (the
// embedded default: in-process ASL interpreter, SQLite state, directory
// blob store) and queries analyses locally or on AWS.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `docpipe — document-processing pipeline runner

Usage:
  docpipe run [flags] FILE|DIR...     process documents locally, with live progress
  docpipe ingest [flags] FILE|DIR...  register and start documents without waiting
  docpipe status [flags] [WORKFLOW]   analyses in progress (--failed: failed ones), or one in detail
  docpipe show [flags] WORKFLOW       results: --text, --summary, --graph, --json
  docpipe rerun [flags] WORKFLOW      re-run the failed parts of a finished analysis
  docpipe work [flags]                process every unfinished workflow in --home (ingest starts this)

Run "docpipe COMMAND -h" for a command's flags.
`

// exitError carries a process exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "docpipe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError{2}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "ingest":
		return cmdIngest(ctx, rest, stdout, stderr)
	case "status":
		return cmdStatus(ctx, rest, stdout, stderr)
	case "show":
		return cmdShow(ctx, rest, stdout, stderr)
	case "work":
		return cmdWork(ctx, rest, stdout, stderr)
	case "rerun":
		return cmdRerun(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "docpipe: unknown command %q\n\n%s", cmd, usage)
	return exitError{2}
}
