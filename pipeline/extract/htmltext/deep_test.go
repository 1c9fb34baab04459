package htmltext

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
)

func TestExtractDeeperThanParserLimit(t *testing.T) {
	t.Parallel()
	const depth = 10000
	var b strings.Builder
	b.WriteString("<html><body><h1>Deep page</h1><p>before the nest</p><script>hidden()</script>")
	for range depth {
		b.WriteString("<div><span>")
	}
	b.WriteString("innermost words<br>next line<nav>menu</nav>")
	for range depth {
		b.WriteString("</span></div>")
	}
	b.WriteString("<table><tr><td>cell one</td><td>cell two</td></tr></table><p>after the nest</p></body></html>")
	us, err := ExtractBytes(context.Background(), []byte(b.String()), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, u := range us {
		all = append(all, u.Text)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"Deep page", "before the nest", "innermost words\nnext line", "cell one\tcell two", "after the nest"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"hidden()", "menu"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("text has dropped content %q", unwanted)
		}
	}
}

func TestExtractFlatHundredThousandElements(t *testing.T) {
	t.Parallel()
	const n = 100000
	var b strings.Builder
	b.WriteString("<html><body>")
	for i := range n {
		fmt.Fprintf(&b, "<p>w%d</p>", i)
	}
	b.WriteString("</body></html>")
	us, err := ExtractBytes(context.Background(), []byte(b.String()), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	words := 0
	for _, u := range us {
		words += len(strings.Fields(u.Text))
	}
	if words != n {
		t.Fatalf("got %d words, want %d", words, n)
	}
}
