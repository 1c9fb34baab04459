package main

import (
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
