package transcribe

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/audio"
)

const pocketsphinxOutput = `wait out the dogs over the lazy dog
<s> 0.000 0.220 0.999100
wait 0.230 0.350 0.230531
<sil> 0.360 0.510 0.845084
[NOISE] 0.520 0.600 0.517898
really(2) 1.920 2.220 0.009771
dog 2.230 2.440 0.535009
</s> 2.450 2.770 1.000000
`

func TestParseTimes(t *testing.T) {
	got := parseTimes(pocketsphinxOutput)
	want := []Word{{"wait", 230, 350}, {"really", 1920, 2220}, {"dog", 2230, 2440}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseTimes = %v, want %v", got, want)
	}
}

func TestBySpan(t *testing.T) {
	words := []Word{{"hello", 100, 400}, {",", 400, 400}, {"world", 500, 900}, {"again", 1200, 1500}, {"late", 2600, 2700}}
	spans := []extract.Span{{StartMS: 0, EndMS: 1000}, {StartMS: 1000, EndMS: 2000}, {StartMS: 2000, EndMS: 2500}}
	got := BySpan(words, spans)
	if got[0].Text != "hello, world" || got[1].Text != "again" || got[2].Text != "late" || len(got[2].Words) != 1 {
		t.Fatalf("BySpan = %+v", got)
	}
}

// writeSilence writes ms milliseconds of silent 16 kHz mono WAV.
func writeSilence(t *testing.T, path string, ms int) {
	t.Helper()
	n := ms * audio.SampleRate / 1000 * 2
	h := make([]byte, 0, 44+n)
	le32 := func(v int) { h = binary.LittleEndian.AppendUint32(h, uint32(v)) }
	le16 := func(v int) { h = binary.LittleEndian.AppendUint16(h, uint16(v)) }
	h = append(h, "RIFF"...)
	le32(36 + n)
	h = append(h, "WAVEfmt "...)
	le32(16)
	le16(1)
	le16(1)
	le32(audio.SampleRate)
	le32(audio.SampleRate * 2)
	le16(2)
	le16(16)
	h = append(h, "data"...)
	le32(n)
	h = append(h, make([]byte, n)...)
	if err := os.WriteFile(path, h, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOneFailingSpanFailsOnlyItsSegment(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.wav")
	writeSilence(t, src, 3000)
	// A recogniser that cannot read the second span and hears "hello" in
	// the others, so that only the model is faked.
	fake := filepath.Join(dir, "fake-recogniser")
	script := "#!/bin/sh\ncase \"$2\" in *span-000002*) echo 'ERROR: cannot read the frames' >&2; exit 3;; esac\necho hello\necho 'hello 0.100 0.400 0.9'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model")
	for _, p := range []string{"en-us/x", "en-us.lm.bin", "cmudict-en-us.dict"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(model, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(model, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng := &Pocketsphinx{Binary: fake, Model: model}
	res, err := eng.Transcribe(context.Background(), Job{Path: src, Format: extract.FormatWAV, Spans: audio.Spans(3e9, 1e9), Dir: dir, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].Text != "hello" || res[2].Words[0].StartMS != 2100 {
		t.Fatalf("results = %+v", res)
	}
	if res[1].Err != "transcription failed: pocketsphinx: ERROR: cannot read the frames" {
		t.Fatalf("the failing span says %q", res[1].Err)
	}
}

func TestWithoutRecogniserItSaysWhy(t *testing.T) {
	eng := &Pocketsphinx{Binary: filepath.Join(t.TempDir(), "no-such-recogniser")}
	if ok, reason := eng.Available(extract.FormatWAV); ok || reason != ReasonNoPocketsphinx {
		t.Fatalf("Available = %v, %q", ok, reason)
	}
	if _, err := eng.Transcribe(context.Background(), Job{Format: extract.FormatWAV}); err == nil || err.Error() != ReasonNoPocketsphinx {
		t.Fatalf("Transcribe error = %v", err)
	}
}
