// Command docpipe runs docpipe's document pipeline on one machine (the
// embedded default: in-process ASL interpreter, SQLite state, directory
// blob store) and queries analyses locally or on AWS.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/internal/cpus"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build information.
var version string

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// exitError carries a process exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a command line docpipe cannot make sense of: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// app is what every command shares: the global flags, defined once on the
// root command, and where output goes.
type app struct {
	stdout, stderr io.Writer

	home         string
	project      string
	table        string
	bucket       string
	stateMachine string
	jsonOut      bool

	// startWorker launches the background `docpipe work` that ingest
	// leaves running; tests replace it.
	startWorker func(runFlags) error
}

// onAWS is the one rule for where a command works: on AWS (DynamoDB, S3,
// Step Functions) when a table is named by --table or DOCPIPE_TABLE,
// otherwise on this machine under --home.
func (a *app) onAWS() bool { return a.table != "" }

// localOnly refuses AWS settings for commands that only run here.
func (a *app) localOnly(cmd *cobra.Command) error {
	if !a.onAWS() {
		return nil
	}
	return usageErrorf("%s works on this machine only, but a DynamoDB table is named (--table or %s), which selects AWS; "+
		"drop it, or use `docpipe ingest` to start documents on AWS", cmd.CommandPath(), backend.EnvTable)
}

// commands are the subcommands; each command's file adds its constructor
// here in an init function, so a new command is one new file.
var commands []func(*app) *cobra.Command

func addCommand(newCmd func(*app) *cobra.Command) { commands = append(commands, newCmd) }

// newRootCmd builds the command tree. It is built afresh for every
// invocation so that flag values never leak between runs (tests run many
// in one process).
//
// The CLI is built on cobra, the library behind gh and kubectl: flags may
// come before or after arguments, shared flags are persistent flags defined
// once on the root, every command carries examples in its help, and shell
// completion for bash, zsh, fish and PowerShell is generated.
func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "docpipe",
		Short: "docpipe — document-processing pipeline runner",
		Long: `docpipe splits documents (PDF, DOCX, HTML, Markdown, text, images) into
segments, analyses every segment in parallel and builds a keyword/entity
graph and a summary per document.

Commands work on this machine, with state under --home, unless a DynamoDB
table is named (--table or ` + backend.EnvTable + `): then they work on AWS.`,
		Example: `  docpipe run samples/docs
  docpipe status --failed
  docpipe show WORKFLOW --summary
  docpipe completion bash > /etc/bash_completion.d/docpipe`,
		Version:       buildVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          commandGroupArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(a.stderr)
			_ = cmd.Usage()
			return exitError{2}
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	pf := root.PersistentFlags()
	pf.StringVar(&a.home, "home", ".docpipe", "local state directory (SQLite state file and blob store)")
	pf.StringVar(&a.project, "project", envOr(backend.EnvProject, backend.DefaultProject), "project the documents belong to [$"+backend.EnvProject+"]")
	pf.BoolVar(&a.jsonOut, "json", false, "print JSON instead of a table")
	pf.StringVar(&a.table, "table", os.Getenv(backend.EnvTable), "AWS: DynamoDB table of the deployment; naming one selects AWS [$"+backend.EnvTable+"]")
	pf.StringVar(&a.bucket, "bucket", os.Getenv(backend.EnvBucket), "AWS: S3 bucket of the deployment [$"+backend.EnvBucket+"]")
	pf.StringVar(&a.stateMachine, "state-machine", os.Getenv(backend.EnvStateMachineARN), "AWS: Step Functions state machine ARN [$"+backend.EnvStateMachineARN+"]")

	for _, newCmd := range commands {
		root.AddCommand(newCmd(a))
	}
	// cobra's completion command prints its help for a shell it does not
	// know and exits 0; name the choices and exit 2 instead.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Args = cobra.ArbitraryArgs
		c.Example = `  docpipe completion bash > /etc/bash_completion.d/docpipe
  docpipe completion zsh > "${fpath[1]}/_docpipe"
  docpipe completion fish > ~/.config/fish/completions/docpipe.fish
  docpipe completion powershell | Out-String | Invoke-Expression`
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s needs a shell: bash, zsh, fish or powershell", cmd.CommandPath())
			}
			return usageErrorf("no completion for %q: choose bash, zsh, fish or powershell", args[0])
		}
	}
	// cobra's help command prints the root's help for a topic it does not
	// know and exits 0; say so and exit 2 instead.
	root.InitDefaultHelpCmd()
	if h, _, err := root.Find([]string{"help"}); err == nil && h != root {
		h.Run = nil
		h.Example = `  docpipe help export
  docpipe help pipeline apply`
		h.RunE = func(c *cobra.Command, args []string) error {
			topic, rest, err := c.Root().Find(args)
			if err != nil || (len(rest) > 0 && topic.HasSubCommands()) {
				return usageErrorf("no help topic %q: `docpipe help` lists the commands", strings.Join(args, " "))
			}
			topic.InitDefaultHelpFlag()
			return topic.Help()
		}
	}
	return root
}

// commandGroupArgs are the arguments of a command that groups others
// (docpipe, docpipe pipeline, ...): none, for a word after it names a
// command of the group, and one that is none is a usage error.
func commandGroupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on its own path
	}
	if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return usageError{errors.New(msg)}
}

// unknownCommand checks that args name an existing command. cobra answers
// --help before it checks arguments, so `docpipe export --help` would print
// the root's help and succeed; the words are checked on a tree of their
// own, which parsing the flags leaves the real one untouched by.
// It returns the group the unknown word follows, for the usage hint.
func unknownCommand(args []string) (*cobra.Command, error) {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil, nil // shell completion, which cobra adds when it runs
	}
	probe := newRootCmd(&app{stdout: io.Discard, stderr: io.Discard})
	probe.InitDefaultHelpCmd()
	cmd, rest, err := probe.Find(args)
	if err != nil || !cmd.HasSubCommands() {
		return nil, nil // a command's own arguments are its business
	}
	cmd.InitDefaultHelpFlag() // cobra adds these as it runs
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, nil // reported as the command runs
	}
	return cmd, cmd.ValidateArgs(cmd.Flags().Args())
}

// exactArgs is cobra.ExactArgs reported as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s takes %s, got %d arguments", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %s, got %d arguments", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf("%s needs %s", cmd.CommandPath(), what)
		}
		return nil
	}
}

// stringFromEnv defines a string flag that takes its value from the
// environment variable env unless given. Unlike a default, that value is
// never printed by --help, since it may hold a secret (a token, a URL's
// password).
func stringFromEnv(fs *pflag.FlagSet, p *string, name, env, usage string) {
	fs.StringVar(p, name, "", usage+" [$"+env+"]")
	*p = os.Getenv(env)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	tuneGC()
	tuneProcs()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

// tuneGC lets the heap grow to five times what is live between
// collections (GOGC=400) instead of twice, under a soft limit of 1 GiB,
// unless the user set GOGC or GOMEMLIMIT. Everything docpipe holds while
// it runs is small (extraction streams), but processing many documents
// allocates fast: on 1,000 one-page files the collector took about a
// tenth of the CPU at the default, and GOGC=400 saved 10-15% of the run's
// time for about 25 MB more peak RSS (BenchmarkSmallDocuments).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// tuneProcs runs one Go processor more than the machine has
// (cpus.Usable), unless the user set GOMAXPROCS; the defaults that size
// work to the machine still count cpus.Usable. A goroutine in a long
// system call — the blob store's syncfs takes milliseconds on a real
// disk — holds its processor until the runtime takes it back, and a run
// of many small documents is bound by serial work (that sync, the table's
// one writer) whose goroutine, once woken, must not wait for a processor.
// On 1,000 one-page files on a 2-core machine's disk this cut the run by
// a fifth (BenchmarkSmallDocuments); on tmpfs, where nothing blocks, it
// cost a few percent.
func tuneProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(cpus.Usable() + 1)
	}
}

// run executes one docpipe command line and prints any error; the error
// it returns decides the exit status (see exitCode).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runApp(ctx, &app{stdout: stdout, stderr: stderr, startWorker: startWorker}, args)
}

func runApp(ctx context.Context, a *app, args []string) error {
	root := newRootCmd(a)
	root.SetArgs(args)
	cmd, err := unknownCommand(args)
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
	}
	var ee exitError
	var ue usageError
	switch {
	case err == nil, errors.As(err, &ee):
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "docpipe: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
	default:
		fmt.Fprintln(a.stderr, "docpipe:", explain(err))
	}
	return err
}

// exitCode maps an error onto the process exit status: 0 success, 1
// failure, 2 usage error (and 3, from run, for documents left waiting for
// a review).
func exitCode(err error) int {
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return 2
	}
	return 1
}
