package mdtext

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

const samples = "../../../samples"

func TestExtractString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		src    string
		limits extract.Limits
		want   []string
	}{
		{
			name: "headings start sections, inline markup dropped",
			src:  "# Title\n\nSome *emphasis* and **strong** and `code`\nsoft break.\n\n## Next\n\nMore ~~old~~ text.\n",
			want: []string{"Title\n\nSome emphasis and strong and code soft break.", "Next\n\nMore old text."},
		},
		{
			name: "gfm table: tabs and newlines, no pipes",
			src:  "| Name | Due |\n|------|-----|\n| Wei **Zhang** | 15 Nov |\n| Olga | 2 Dec |\n",
			want: []string{"Name\tDue\nWei Zhang\t15 Nov\nOlga\t2 Dec"},
		},
		{
			name: "lists: one line per item, nested after",
			src:  "- one\n- two\n  - two.a\n- [x] done\n\n1. first\n2. second\n",
			want: []string{"one\ntwo\ntwo.a\n[x] done\n\nfirst\nsecond"},
		},
		{
			name: "links keep text, mailto keeps a hidden address, autolinks keep the url",
			src:  "See [docs](https://x.example/docs), ![logo](l.png), <https://y.example>, www.z.example and [PMO](mailto:pmo@f.example).\n",
			want: []string{"See docs, logo, https://y.example, www.z.example and PMO (pmo@f.example)."},
		},
		{
			name: "code blocks kept verbatim, html text kept",
			src:  "```go\nfunc main() {\n\tprintln(1)\n}\n```\n\n    indented code\n\n<div class=\"note\">\n<b>Note:</b> html block\n</div>\n\nInline <span>html</span> here.\n",
			want: []string{"func main() {\n\tprintln(1)\n}\n\nindented code\n\nNote: html block\n\nInline html here."},
		},
		{
			name: "blockquote text",
			src:  "> Risk: the export takes 14 hours.\n",
			want: []string{"Risk: the export takes 14 hours."},
		},
		{
			name:   "bounded sections",
			src:    "aaaa aaaa\n\nbbbb bbbb\n\ncccc\n",
			limits: extract.Limits{MaxSectionChars: 12},
			want:   []string{"aaaa aaaa", "bbbb bbbb", "cccc"},
		},
		{
			name: "empty",
			src:  "\n\n---\n",
			want: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			us, err := ExtractString(context.Background(), tc.src, tc.limits)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(us))
			for i, u := range us {
				if u.Index != i+1 || u.Kind != "section" {
					t.Fatalf("unit %d = %+v", i, u)
				}
				got[i] = u.Text
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("units:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

func TestExtractSample(t *testing.T) {
	t.Parallel()
	us, err := Extract(context.Background(), filepath.Join(samples, "docs/notes.md"), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, u := range us {
		all.WriteString(u.Text + "\n---\n")
	}
	text := all.String()
	if len(us) != 4 {
		t.Fatalf("%d sections, want 4 (title and three headings):\n%s", len(us), text)
	}
	for _, w := range []string{"Project Falcon — kickoff notes", "Date: 21 October 2024\nAttendees:",
		"Data migration\tWei Zhang\t15 November 2024\twei.zhang@falcon.example", "£185,000",
		"crm-export --since 2019-01-01", "the project office (falcon-pmo@falcon.example)", "Proposal: Olga covers vendor calls."} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	for _, bad := range []string{"|", "**", "](", "---|"} {
		if strings.Contains(strings.ReplaceAll(text, "\n---\n", ""), bad) {
			t.Errorf("markup %q leaked:\n%s", bad, text)
		}
	}
}

func TestExtractErrors(t *testing.T) {
	t.Parallel()
	_, err := Extract(context.Background(), filepath.Join(samples, "docs/notes.md"), extract.Limits{MaxSectionChars: 50, MaxPages: 3})
	if steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("err = %v, want TooLarge", err)
	}
	_, err = Extract(context.Background(), filepath.Join(samples, "bad/empty.txt"), extract.Limits{})
	if steperr.Name(err) != steperr.NameInvalidDocument {
		t.Fatalf("err = %v, want InvalidDocument", err)
	}
}

func BenchmarkExtractString(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 4<<20; i++ {
		if i%10 == 0 {
			sb.WriteString("## Section heading\n\n")
		}
		sb.WriteString("The pilot runs from **4 November 2024** to 31 January 2025, see [the plan](https://x.example).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n")
	}
	src := sb.String()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := ExtractString(context.Background(), src, extract.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
