package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/extract"
)

// spokenSentence is what the speech test says and listens for.
const spokenSentence = "the quick brown fox jumps over the lazy dog"

// needTools skips a test when a program it needs is not installed, naming
// the package to install.
func needTools(t *testing.T, tools map[string]string) {
	t.Helper()
	for bin, pkg := range tools {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install %s)", bin, pkg)
		}
	}
}

// speak says the sentence into a 16 kHz mono WAV file.
func speak(t *testing.T, dir, sentence string) string {
	t.Helper()
	raw := filepath.Join(dir, "spoken-raw.wav")
	// The Klatt voice is the one pocketsphinx's US English model hears best.
	if out, err := exec.Command("espeak-ng", "-v", "en-us+klatt", "-w", raw, sentence).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	wav := filepath.Join(dir, "spoken.wav")
	// Half a second of quiet on either side, as a recording has: the
	// recogniser learns the room's level from the start of the audio.
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", raw, "-af", "adelay=500,apad=pad_dur=0.5",
		"-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", wav).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	return wav
}

// wordsFound counts the words of want that the transcript holds, each
// occurrence at most once.
func wordsFound(want, transcript string) int {
	have := map[string]int{}
	for _, w := range strings.Fields(strings.ToLower(transcript)) {
		have[strings.Trim(w, ".,?!")]++
	}
	n := 0
	for _, w := range strings.Fields(want) {
		if have[w] > 0 {
			have[w]--
			n++
		}
	}
	return n
}

// showSegments reads the segment items through docpipe show --json.
func showSegments(t *testing.T, home, workflowID string) []pipeline.Segment {
	t.Helper()
	out, err := cli(t, "show", "--home", home, "--json", workflowID)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Segments []pipeline.Segment `json:"segments"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	return shown.Segments
}

// A spoken sentence, as WAV and as MP3, runs through the whole pipeline on
// the embedded engine and comes back as text with its span of time.
func TestRunTranscribesSpeech(t *testing.T) {
	t.Parallel()
	needTools(t, map[string]string{"espeak-ng": "espeak-ng", "ffmpeg": "ffmpeg", "pocketsphinx_continuous": "pocketsphinx pocketsphinx-en-us"})
	dir := t.TempDir()
	wav := speak(t, dir, spokenSentence)
	mp3 := filepath.Join(dir, "spoken.mp3")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", "libmp3lame", "-b:a", "64k", mp3).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg mp3: %v %s", err, out)
	}
	for _, file := range []string{wav, mp3} {
		t.Run(filepath.Ext(file)[1:], func(t *testing.T) {
			home := t.TempDir()
			started := time.Now()
			out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", file)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(started)
			r := decodeLines[docResult](t, out)[0]
			if r.Status != "completed" || r.Segments != 1 || r.SkippedSegments+r.FailedSegments != 0 {
				t.Fatalf("run: %+v", r)
			}
			text, err := cli(t, "show", "--home", home, "--text", r.WorkflowID)
			if err != nil {
				t.Fatal(err)
			}
			found, total := wordsFound(spokenSentence, text), len(strings.Fields(spokenSentence))
			segs := showSegments(t, home, r.WorkflowID)
			if len(segs) != 1 || segs[0].Source != "audio" || segs[0].Span == nil || segs[0].Span.StartMS != 0 || segs[0].Span.EndMS < 2000 {
				t.Fatalf("segments = %+v", segs)
			}
			minutes := float64(segs[0].Span.EndMS) / 60000
			t.Logf("%s: %d of %d words (%.0f%%) in %q; %.1f s of run per audio minute", filepath.Base(file), found, total, 100*float64(found)/float64(total), strings.TrimSpace(text), took.Seconds()/minutes)
			if 2*found < total {
				t.Fatalf("the transcript %q holds %d of the %d words said", text, found, total)
			}
		})
	}
}

// writeSilentWAV writes seconds of silent 16 kHz mono WAV.
func writeSilentWAV(t *testing.T, path string, seconds int) {
	t.Helper()
	n := seconds * 16000 * 2
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(36+n))
	b = append(b, "WAVEfmt "...)
	for _, v := range []uint32{16, 1 | 1<<16, 16000, 32000, 2 | 16<<16} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = append(b, make([]byte, n)...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Without a recogniser an audio document completes with every span
// skipped, and says why; the spans still carry their times.
func TestRunAudioWithoutRecogniserSkipsSpans(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no pocketsphinx, no ffmpeg
	home := t.TempDir()
	wav := filepath.Join(t.TempDir(), "silence.wav")
	writeSilentWAV(t, wav, 65)
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", wav)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeLines[docResult](t, out)[0]
	if r.Status != "completed" || r.Segments != 3 || r.SkippedSegments != 3 || len(r.SkippedReasons) != 1 || !strings.Contains(r.SkippedReasons[0], "pocketsphinx is not installed") {
		t.Fatalf("run: %+v", r)
	}
	segs := showSegments(t, home, r.WorkflowID)
	if len(segs) != 3 || segs[2].Span == nil || segs[2].Span.StartMS != 60000 || segs[2].Span.EndMS != 65000 {
		t.Fatalf("segments = %+v", segs)
	}
}

// show --text says when each audio segment was said, also for spans that
// have no text.
func TestShowTextLabelsAudioSpans(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no recogniser: every span is skipped
	home := t.TempDir()
	wav := filepath.Join(t.TempDir(), "silence.wav")
	writeSilentWAV(t, wav, 65)
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", wav)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeLines[docResult](t, out)[0]
	text, err := cli(t, "show", "--home", home, "--text", r.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for line := range strings.Lines(text) {
		if label, _, ok := strings.Cut(line, " "); ok && strings.HasPrefix(label, "[") {
			labels = append(labels, label)
		}
	}
	want := []string{"[00:00–00:30]", "[00:30–01:00]", "[01:00–01:05]"}
	if !slices.Equal(labels, want) {
		t.Errorf("segment labels %q, want %q in\n%s", labels, want, text)
	}
}

func TestSpanLabelShowsHoursOnceReached(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		span extract.Span
		want string
	}{
		{extract.Span{StartMS: 0, EndMS: 30000}, "[00:00–00:30]"},
		{extract.Span{StartMS: 3570000, EndMS: 3600000}, "[59:30–1:00:00]"},
		{extract.Span{StartMS: 36000999, EndMS: 36029999}, "[10:00:00–10:00:29]"},
	} {
		if got := spanLabel(c.span); got != c.want {
			t.Errorf("spanLabel(%+v) = %q, want %q", c.span, got, c.want)
		}
	}
}
