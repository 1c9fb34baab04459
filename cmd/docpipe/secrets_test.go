package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags that read a secret from the environment never show it in --help.
func TestHelpShowsNoSecrets(t *testing.T) {
	t.Setenv("DOCPIPE_TOKEN", "tok-3f9a1c")
	t.Setenv("DOCPIPE_WEBHOOK_URL", "https://user:hookpass-77@hooks.example.com/x?token=q-88")
	t.Setenv("DOCPIPE_EVENT_COMMAND", "notify --key cmdkey-55")
	for _, args := range [][]string{{"serve", "--help"}, {"run", "--help"}, {"work", "--help"}} {
		out, _, code := cliAll(args...)
		if code != 0 || !strings.Contains(out, "--webhook") {
			t.Fatalf("%v: exit %d, %s", args, code, out)
		}
		for _, secret := range []string{"tok-3f9a1c", "hookpass-77", "q-88", "cmdkey-55"} {
			if strings.Contains(out, secret) {
				t.Errorf("%v shows %q:\n%s", args, secret, out)
			}
		}
	}
}

// A project webhook's and an HTTP stage's secrets stay out of what
// `events sinks` and `pipeline show` print, as text or JSON.
func TestShownURLsHideSecrets(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	hook := "https://user:hookpass-61@hooks.example.com/x?sig=sig-62"
	want(t, 0, nil, "project", "create", "contracts", "--home", home)
	want(t, 0, nil, "events", "sinks", "--home", home, "contracts", "webhook="+hook)
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	src := "name: hooked\nstages:\n  - name: shout\n    needs: [segment_builder]\n    run: {http: \"https://u:stagepass-63@svc.example.com/?api_key=key-64\"}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, nil, "pipeline", "apply", file, "--home", home)
	for _, args := range [][]string{
		{"events", "sinks", "contracts"}, {"events", "sinks", "contracts", "--json"},
		{"pipeline", "show", "hooked"}, {"pipeline", "show", "hooked", "--json"},
	} {
		out := want(t, 0, []string{"example.com"}, append(args, "--home", home)...)
		for _, secret := range []string{"hookpass-61", "sig-62", "stagepass-63", "key-64"} {
			if strings.Contains(out, secret) {
				t.Errorf("docpipe %v shows %q:\n%s", args, secret, out)
			}
		}
	}
}
