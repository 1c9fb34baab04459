package hostile

import (
	"fmt"
	"io"
	"strings"
)

// HTMLDeepNesting is a page of depth nested elements around one word.
func HTMLDeepNesting(w io.Writer, depth int) error {
	io.WriteString(w, "<!DOCTYPE html><html><body>")
	io.WriteString(w, strings.Repeat("<div><b>", depth))
	io.WriteString(w, "deep")
	_, err := io.WriteString(w, strings.Repeat("</b></div>", depth)+"</body></html>")
	return err
}

// MarkdownDeepNesting is block quotes nested depth deep, list items
// nested up to a thousand deep (each level indents every line below it),
// then depth unclosed brackets.
func MarkdownDeepNesting(w io.Writer, depth int) error {
	io.WriteString(w, "# Deep\n\n"+strings.Repeat(">", depth)+" quoted\n\n")
	for i := range min(depth, 1_000) {
		fmt.Fprintf(w, "%s- item %d\n", strings.Repeat("  ", i), i)
	}
	_, err := io.WriteString(w, "\n"+strings.Repeat("[", depth)+"\n")
	return err
}

// MarkdownReferences is refs link reference definitions, each used once.
func MarkdownReferences(w io.Writer, refs int) error {
	io.WriteString(w, "# References\n\n")
	for i := range refs {
		fmt.Fprintf(w, "See [item %d][r%d].\n", i, i)
	}
	io.WriteString(w, "\n")
	for i := range refs {
		if _, err := fmt.Fprintf(w, "[r%d]: https://example.com/%d \"Title %d\"\n", i, i, i); err != nil {
			return err
		}
	}
	return nil
}

// TextOneLine is size bytes of words without a line break.
func TextOneLine(w io.Writer, size int64) error {
	return repeat(w, words, size)
}
