package pipeline

import "testing"

func TestStageTexts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		run  RunSpec
		want string
	}{
		{RunSpec{Builtin: "ocr"}, "builtin ocr"},
		{RunSpec{Command: []string{"python3", "redact.py"}}, "command python3 redact.py"},
		{RunSpec{Command: []string{"python3", "count.py"}, Batch: true}, "command python3 count.py (batch)"},
		{RunSpec{HTTP: "https://x.test/stage"}, "http https://x.test/stage"},
		{RunSpec{Lambda: "fn"}, "lambda fn"},
		{RunSpec{Review: &ReviewSpec{Assign: []string{"ann", "bob"}}}, "review ann,bob"},
		{RunSpec{Review: &ReviewSpec{Group: "legal"}}, "review group legal"},
		{RunSpec{Builtin: "ocr", Lambda: "fn"}, "-"},
	} {
		if got := c.run.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.run, got, c.want)
		}
	}
	for _, c := range []struct {
		when *When
		want string
	}{
		{nil, "-"},
		{&When{}, "-"},
		{&When{Format: []string{"pdf", "image"}, Language: []string{"de"}}, "format=pdf,image language=de"},
		{&When{Pages: &PageRange{Min: 2}}, "pages=2..-"},
		{&When{Pages: &PageRange{Max: 10}}, "pages=0..10"},
	} {
		if got := c.when.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.when, got, c.want)
		}
	}
	st := Stage{Retryable: true, Retry: DefaultRetry}
	if got := st.RetryText(); got != "4x 1s*2 max 30s" {
		t.Errorf("retry %q", got)
	}
	if st.Retryable = false; st.RetryText() != "none" {
		t.Errorf("a stage that is not retryable: %q", st.RetryText())
	}
}
