package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Read commands on a state home that does not exist print their empty
// listing and succeed, and create nothing; reading one thing says how to
// start.
func TestReadCommandsOnAFreshHome(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "fresh")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "no analyses yet: docpipe run FILE\n"},
		{[]string{"status", "--failed"}, "no analyses yet: docpipe run FILE\n"},
		{[]string{"status", "--all"}, "no analyses yet: docpipe run FILE\n"},
		{[]string{"status", "--json"}, "[]\n"},
		{[]string{"events"}, "no events\n"},
		{[]string{"events", "--failed"}, "no events\n"},
		{[]string{"review", "list"}, "no reviews waiting\n"},
		{[]string{"review", "list", "--json"}, ""},
		{[]string{"pipeline", "list"}, "no pipelines stored; `docpipe pipeline apply FILE` stores one\n"},
		{[]string{"pipeline", "list", "--json"}, "[]\n"},
	} {
		stdout, stderr, code := cliAll(append(c.args, "--home", home)...)
		if code != 0 || stdout != c.want || stderr != "" {
			t.Errorf("docpipe %s on a fresh home: exit %d, stdout %q, stderr %q; want exit 0 and %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
	_, stderr, code := cliAll("show", "01J8Z3K6Q2V4N7T1X5B9C0D2EF", "--home", home)
	if code != 1 || !strings.Contains(stderr, "nothing has run in "+home+" yet: `docpipe run FILE` starts there") {
		t.Errorf("show on a fresh home: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("a read command created the state home: %v", err)
	}
}

// A file name with control characters stays on its row in every table,
// escaped, and as it is in JSON.
func TestControlCharactersInNamesAreEscaped(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := t.TempDir()
	name := "new\nline\x1b[31m.txt"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("Some text about Berlin.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := want(t, 0, nil, "run", dir, "--home", home, "--progress", "none")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], filepath.Join(dir, `new\nline\x1b[31m.txt`)+"  ") {
		t.Fatalf("run table:\n%s\nwant a header and one row starting with the escaped name", out)
	}
	all := want(t, 0, []string{`new\nline\x1b[31m.txt`}, "status", "--all", "--home", home)
	if strings.Contains(all, "\x1b") || len(strings.Split(strings.TrimSpace(all), "\n")) != 2 {
		t.Fatalf("status --all:\n%s", all)
	}
	var page recentPage
	if err := json.Unmarshal([]byte(want(t, 0, nil, "status", "--all", "--json", "--home", home)), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Analyses) != 1 || page.Analyses[0].FileName != name {
		t.Fatalf("status --all --json = %+v, want the name as it is", page)
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain.pdf":        "plain.pdf",
		"Übersicht 東京.pdf": "Übersicht 東京.pdf",
		"a\tb\r\n":         `a\tb\r\n`,
		"\x1b[2J\x7f":      `\x1b[2J\x7f`,
		"x\u2028y\u202ez":  `x\u2028y\u202ez`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// status --all lists analyses of every status newest first, a page at a
// time, filtered by status and project.
func TestStatusAll(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	want(t, 0, nil, "run", filepath.Join(docs, "notes.md"), "--home", home, "--progress", "none")
	want(t, 0, nil, "run", filepath.Join(docs, "page.html"), "--project", "contracts", "--home", home, "--progress", "none")
	out := want(t, 0, []string{"WORKFLOW", "PROJECT", "completed"}, "status", "--all", "--home", home)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "page.html") || !strings.Contains(lines[2], "notes.md") {
		t.Fatalf("status --all:\n%s\nwant both, newest first", out)
	}
	first := want(t, 0, []string{"page.html", "more: docpipe status --all --after "}, "status", "--all", "--limit", "1", "--home", home)
	cursor := strings.TrimSpace(first[strings.LastIndex(first, " ")+1:])
	want(t, 0, []string{"notes.md"}, "status", "--all", "--limit", "1", "--after", cursor, "--home", home)
	want(t, 2, []string{`--after "page.html": not a cursor a previous page printed`}, "status", "--all", "--after", "page.html", "--home", home)
	only := want(t, 0, []string{"contracts"}, "status", "--all", "--project", "contracts", "--home", home)
	if strings.Contains(only, "notes.md") {
		t.Fatalf("status --all --project contracts:\n%s", only)
	}
	want(t, 0, []string{"no analyses\n"}, "status", "--all", "--status", "failed", "--home", home)
	want(t, 2, []string{`--status "done": choose one of pending, in_progress, waiting_review, completed, failed`}, "status", "--all", "--status", "done", "--home", home)
	want(t, 2, []string{"add --all"}, "status", "--status", "failed", "--home", home)
}
