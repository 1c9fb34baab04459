package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/extract"
)

// readmeCommands returns every docpipe command line in README.md's fenced
// code blocks, as the words after "docpipe", without trailing comments.
// `go run ./cmd/docpipe ...` counts as docpipe.
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]string
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		words := strings.Fields(line)
		switch {
		case len(words) > 0 && words[0] == "docpipe":
			words = words[1:]
		case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/docpipe":
			words = words[3:]
		default:
			continue
		}
		lines = append(lines, words)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// synopsisVariants turns a usage line into concrete command lines: without
// any optional [group], with every group (first alternative), and once per
// alternative of a group that offers several.
func synopsisVariants(words []string) [][]string {
	type group struct {
		start, end int // word indexes of the group, end exclusive
		alts       [][]string
	}
	var groups []group
	for i := 0; i < len(words); i++ {
		if !strings.HasPrefix(words[i], "[") {
			continue
		}
		j := i
		for !strings.HasSuffix(words[j], "]") {
			j++
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(strings.Join(words[i:j+1], " "), "["), "]")
		g := group{start: i, end: j + 1}
		if strings.HasPrefix(inner, "-") && strings.Contains(inner, "|") && !strings.Contains(inner, " ") {
			for _, alt := range strings.Split(inner, "|") {
				g.alts = append(g.alts, []string{alt})
			}
		} else {
			g.alts = [][]string{strings.Fields(inner)}
		}
		groups = append(groups, g)
		i = j
	}
	build := func(choice map[int]int) []string {
		var out []string
		next := 0
		for gi, g := range groups {
			out = append(out, words[next:g.start]...)
			if alt, ok := choice[gi]; ok {
				out = append(out, g.alts[alt]...)
			}
			next = g.end
		}
		return append(out, words[next:]...)
	}
	all := map[int]int{}
	for gi := range groups {
		all[gi] = 0
	}
	variants := [][]string{build(nil), build(all)}
	for gi, g := range groups {
		for alt := 1; alt < len(g.alts); alt++ {
			variants = append(variants, build(map[int]int{gi: alt}))
		}
	}
	// Words offering alternatives outside a group (a shell name) expand
	// into one line each; a flag's value takes its first alternative.
	var expanded [][]string
	for _, v := range variants {
		expanded = append(expanded, expandAlternatives(v)...)
	}
	var unique [][]string
	for _, v := range expanded {
		if !slices.ContainsFunc(unique, func(u []string) bool { return slices.Equal(u, v) }) {
			unique = append(unique, v)
		}
	}
	return unique
}

func expandAlternatives(words []string) [][]string {
	for i, w := range words {
		if !strings.Contains(w, "|") || strings.HasPrefix(w, "-") || isPlaceholder(w) {
			continue
		}
		alts := strings.Split(w, "|")
		if i > 0 && strings.HasPrefix(words[i-1], "--") {
			alts = alts[:1]
		}
		var out [][]string
		for _, alt := range alts {
			v := slices.Clone(words)
			v[i] = alt
			out = append(out, expandAlternatives(v)...)
		}
		return out
	}
	return [][]string{words}
}

var placeholderRE = regexp.MustCompile(`^[A-Z][A-Z|.]*$`)

func isPlaceholder(w string) bool { return placeholderRE.MatchString(w) }

// awsFlags name AWS resources: lines with them are checked for parsing
// only, since running them needs a deployment (the integration suite
// runs the same commands against one).
var awsFlags = []string{"--table", "--bucket", "--state-machine"}

// Every command line README.md shows is parsed and run: the README cannot
// drift from the CLI.
func TestREADMECommandLinesWork(t *testing.T) {
	t.Parallel()
	lines := readmeCommands(t)
	if len(lines) < 10 {
		t.Fatalf("found %d docpipe command lines in README.md; the usage block is missing", len(lines))
	}
	home := t.TempDir()
	// An earlier run supplies the real values the placeholders stand for.
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", docs)
	if err != nil {
		t.Fatal(err)
	}
	results := decodeLines[docResult](t, out)
	if len(results) == 0 {
		t.Fatal("no results")
	}
	// WORKFLOW ran the redact sample, so that `show --stage redact` has
	// a stage of the user's to show.
	if _, err := cli(t, "pipeline", "apply", "--home", home, filepath.Join("..", "..", "samples", "pipelines", "redact", "pipeline.yaml")); err != nil {
		t.Fatal(err)
	}
	if out, err = cli(t, "run", "--home", home, "--json", "--progress", "none", "--pipeline", "redact", filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}
	results = decodeLines[docResult](t, out)
	values := map[string]string{
		"WORKFLOW":    results[0].WorkflowID,
		"FILE":        filepath.Join(docs, "notes.md"),
		"FILE...":     filepath.Join(docs, "notes.md"),
		"DIR":         docs,
		"DIR...":      docs,
		"FILE|DIR...": docs,
		"N":           "2",
		"QUERY":       "invoice",
		"P":           "default",
		"NAME":        "docpipe",
		"TIME":        "24h",
		"T":           "docpipe-readme-table",
		"B":           "docpipe-readme-bucket",
		"ARN":         "arn:aws:states:us-east-1:000000000000:stateMachine:docpipe",
	}
	var commandNames []string
	for _, c := range newRootCmd(&app{}).Commands() {
		commandNames = append(commandNames, c.Name())
	}

	for _, line := range lines {
		for _, v := range synopsisVariants(line) {
			if len(v) > 0 && v[0] == "COMMAND" {
				for _, name := range commandNames {
					checkREADMELine(t, home, values, append([]string{name}, v[1:]...))
				}
				continue
			}
			checkREADMELine(t, home, values, v)
		}
	}
}

func checkREADMELine(t *testing.T, home string, values map[string]string, words []string) {
	t.Helper()
	args := make([]string, 0, len(words)+2)
	hasHome := false
	for i, w := range words {
		switch {
		case i > 0 && words[i-1] == "--home":
			w, hasHome = home, true
		case values[w] != "":
			w = values[w]
		case isPlaceholder(w):
			t.Errorf("README line %q: placeholder %s stands for nothing this test knows", strings.Join(words, " "), w)
			return
		default:
			// Paths in the README are relative to the repository root;
			// the command's name is never one (`pipeline` is also a folder).
			if _, err := os.Stat(filepath.Join("..", "..", w)); err == nil && i > 0 && !strings.HasPrefix(w, "-") {
				w = filepath.Join("..", "..", w)
			}
		}
		args = append(args, w)
	}
	if !hasHome {
		args = append(args, "--home", home)
	}
	name := strings.Join(words, " ")
	t.Run(name, func(t *testing.T) {
		// AWS lines need a deployment, and serve runs until interrupted:
		// those are parsed, not run.
		if (args[0] == "serve" && !slices.Contains(args, "--help")) || slices.ContainsFunc(args, func(a string) bool { return slices.Contains(awsFlags, a) }) {
			checkParses(t, args)
			return
		}
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr, startWorker: workInProcess}
		if err := runApp(context.Background(), a, args); err != nil {
			t.Errorf("docpipe %s: exit %d (%v)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), exitCode(err), err, stdout.String(), stderr.String())
		}
	})
}

// checkParses resolves the command and parses its flags and arguments
// without running it.
func checkParses(t *testing.T, args []string) {
	t.Helper()
	root := newRootCmd(&app{stdout: io.Discard, stderr: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Fatalf("docpipe %s: %v", strings.Join(args, " "), err)
	}
	if cmd == root {
		t.Fatalf("docpipe %s: no such command", strings.Join(args, " "))
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("docpipe %s: %v", strings.Join(args, " "), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Fatalf("docpipe %s: %v", strings.Join(args, " "), err)
	}
}

// workInProcess stands in for ingest's background worker: the test binary
// is not docpipe, so the work runs here, before ingest returns.
func workInProcess(f runFlags) error {
	return runApp(context.Background(), &app{stdout: io.Discard, stderr: io.Discard}, []string{"work", "--home", f.home, "--progress", "none"})
}

func TestSynopsisVariants(t *testing.T) {
	t.Parallel()
	got := synopsisVariants(strings.Fields("show WORKFLOW [--text|--json] [--home DIR]"))
	want := [][]string{
		strings.Fields("show WORKFLOW"),
		strings.Fields("show WORKFLOW --text --home DIR"),
		strings.Fields("show WORKFLOW --json"),
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = synopsisVariants(strings.Fields("completion bash|zsh --pdf auto|go"))
	want = [][]string{strings.Fields("completion bash --pdf auto"), strings.Fields("completion zsh --pdf auto")}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// README names the formats a stage's `when` takes, and what each group
// stands for, exactly as the function that expands them does.
func TestREADMEWhenFormats(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := func(names []string) string {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = "`" + n + "`"
		}
		return strings.Join(quoted, ", ")
	}
	var formats []string
	for _, f := range extract.Formats {
		formats = append(formats, string(f))
	}
	var groups []string
	for _, g := range pipeline.FormatGroups() {
		members, _ := pipeline.FormatGroup(g)
		groups = append(groups, fmt.Sprintf("`%s` (%s)", g, code(members)))
	}
	want := fmt.Sprintf("`format` takes the formats the sniffer names, %s, and the groups %s.", code(formats), strings.Join(groups, " and "))
	if readme := strings.Join(strings.Fields(string(data)), " "); !strings.Contains(readme, want) {
		t.Errorf("README's \"When\" paragraph should read:\n%s", want)
	}
}
