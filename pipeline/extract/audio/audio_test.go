package audio

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// writeWAV writes ms milliseconds of 16 kHz mono samples whose value is
// their millisecond, so that a cut can be checked sample by sample.
func writeWAV(t *testing.T, path string, ms int) {
	t.Helper()
	const perMS = SampleRate / 1000
	data := make([]byte, 0, ms*perMS*2)
	for i := range ms * perMS {
		data = binary.LittleEndian.AppendUint16(data, uint16(i/perMS))
	}
	b := append(wavHeader(int64(len(data))), data...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSpans(t *testing.T) {
	got := Spans(65*time.Second+500*time.Millisecond, 30*time.Second)
	want := []extract.Span{{StartMS: 0, EndMS: 30000}, {StartMS: 30000, EndMS: 60000}, {StartMS: 60000, EndMS: 65500}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Spans = %v, want %v", got, want)
	}
	if got := Spans(0, 0); len(got) != 1 {
		t.Fatalf("an empty file has %d spans, want 1", len(got))
	}
	if got := Spans(60*time.Second, 0); len(got) != 2 {
		t.Fatalf("a minute at the default span has %d spans, want 2", len(got))
	}
}

func TestUnitsAndCutOfWAV(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.wav")
	writeWAV(t, src, 2500)
	units, err := Units(context.Background(), src, extract.FormatWAV, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 3 || units[2].Kind != "span" || *units[2].Audio != (extract.Span{StartMS: 2000, EndMS: 2500}) {
		t.Fatalf("units = %+v", units)
	}
	dst := filepath.Join(dir, "cut.wav")
	if err := Cut(src, *units[1].Audio, dst); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHeader(f)
	if err != nil || !h.Recognisable() || h.Duration() != time.Second {
		t.Fatalf("cut header = %+v, %v; want one second of 16 kHz mono", h, err)
	}
	var first, last uint16
	if _, err := f.Seek(h.DataOffset, 0); err != nil {
		t.Fatal(err)
	}
	_ = binary.Read(f, binary.LittleEndian, &first)
	if _, err := f.Seek(h.DataOffset+h.DataBytes-2, 0); err != nil {
		t.Fatal(err)
	}
	_ = binary.Read(f, binary.LittleEndian, &last)
	if first != 1000 || last != 1999 {
		t.Fatalf("cut holds milliseconds %d..%d, want 1000..1999", first, last)
	}
}

func TestReadHeaderRejectsCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"not riff":     []byte("RIFX\x00\x00\x00\x00WAVEfmt "),
		"no data":      append([]byte("RIFF\x00\x00\x00\x00WAVE"), wavHeader(0)[12:36]...),
		"data first":   []byte("RIFF\x00\x00\x00\x00WAVEdata\x04\x00\x00\x00abcd"),
		"fmt too tiny": []byte("RIFF\x00\x00\x00\x00WAVEfmt \x04\x00\x00\x00abcd"),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Duration(context.Background(), p, extract.FormatWAV); steperr.Name(err) != steperr.NameInvalidDocument {
			t.Errorf("%s: Duration error = %v, want an invalid document", name, err)
		}
	}
}

func TestDecodeCompressedWithFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "tone.flac")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=44100", "-ac", "2", src).CombinedOutput(); err != nil {
		t.Fatalf("make FLAC: %v %s", err, out)
	}
	units, err := Units(ctx, src, extract.FormatFLAC, 2*time.Second)
	if err != nil || len(units) != 2 || units[1].Audio.EndMS < 2900 {
		t.Fatalf("Units = %+v, %v; want 0-2 s and 2-3 s", units, err)
	}
	wav, err := Recognisable(ctx, src, extract.FormatFLAC, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := Cut(wav, *units[1].Audio, filepath.Join(dir, "cut.wav")); err != nil {
		t.Fatalf("the decoded file cannot be cut: %v", err)
	}
	if _, err := Recognisable(ctx, filepath.Join(dir, "missing.mp3"), extract.FormatMP3, dir); steperr.Name(err) != steperr.NameInvalidDocument {
		t.Fatalf("decoding a missing file: %v, want an invalid document", err)
	}
}

func TestCompressedWithoutFFmpegIsOneUnavailableUnit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx := context.Background()
	units, err := Units(ctx, "whatever.mp3", extract.FormatMP3, 0)
	if err != nil || len(units) != 1 || units[0].Audio == nil {
		t.Fatalf("Units = %+v, %v; want one unit for the whole file", units, err)
	}
	_, err = Recognisable(ctx, "whatever.mp3", extract.FormatMP3, t.TempDir())
	if u, ok := err.(*UnavailableError); !ok || u.Reason != ReasonNoFFmpeg {
		t.Fatalf("Recognisable error = %v, want %q", err, ReasonNoFFmpeg)
	}
}

// The media tools get none of docpipe's credentials.
func TestMediaToolsGetNoCredentials(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
	out, err := runTool(t.Context(), "env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "aws-secret-value") || !strings.Contains(out, "PATH=") {
		t.Errorf("a media tool's environment:\n%s", out)
	}
}
