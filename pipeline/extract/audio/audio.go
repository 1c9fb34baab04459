// Package audio plans the segments of a sound file — one per fixed span of
// time — and prepares the audio a speech recogniser reads: 16 kHz mono
// 16-bit PCM WAV, decoded by ffmpeg when the file is anything else, and cut
// into spans in Go. ffmpeg (and its ffprobe) are optional: without them a
// WAV file is still read, other formats report why they cannot be.
package audio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docpipe/docpipe/pipeline/childenv"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"

	"github.com/docpipe/docpipe/internal/childproc"
)

// DefaultSpan is how much audio one segment holds unless told otherwise.
const DefaultSpan = 30 * time.Second

// SampleRate, Channels and BitsPerSample describe the audio a recogniser
// gets: what pocketsphinx's acoustic models are trained on.
const (
	SampleRate    = 16000
	Channels      = 1
	BitsPerSample = 16
)

// ReasonNoFFmpeg says why a compressed (or not 16 kHz mono) file cannot be
// decoded.
const ReasonNoFFmpeg = "transcription skipped: ffmpeg is not installed (apt-get install ffmpeg)"

// UnavailableError is returned when a tool the work needs is missing;
// callers mark the work skipped with Reason rather than failing it.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

// Units plans one "span" unit per span of audio in the file: its duration
// comes from the WAV header, or from ffprobe for the other formats. When
// the duration cannot be known (no ffprobe), the whole file is one unit
// whose span ends at 0, and decoding it will report why.
func Units(ctx context.Context, path string, format extract.Format, span time.Duration) ([]extract.Unit, error) {
	d, err := Duration(ctx, path, format)
	var unavailable *UnavailableError
	if errors.As(err, &unavailable) {
		return []extract.Unit{{Index: 1, Kind: "span", Audio: &extract.Span{}}}, nil
	}
	if err != nil {
		return nil, err
	}
	spans := Spans(d, span)
	units := make([]extract.Unit, len(spans))
	for i, s := range spans {
		units[i] = extract.Unit{Index: i + 1, Kind: "span", Audio: &s}
	}
	return units, nil
}

// Spans divides a duration into spans of at most every (DefaultSpan when
// zero); a silent, zero-length file still has one span.
func Spans(total, every time.Duration) []extract.Span {
	if every <= 0 {
		every = DefaultSpan
	}
	end, step := total.Milliseconds(), every.Milliseconds()
	if end <= 0 {
		return []extract.Span{{}}
	}
	var out []extract.Span
	for from := int64(0); from < end; from += step {
		out = append(out, extract.Span{StartMS: from, EndMS: min(from+step, end)})
	}
	return out
}

// Duration is how long the file plays.
func Duration(ctx context.Context, path string, format extract.Format) (time.Duration, error) {
	if format == extract.FormatWAV {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer func() { _ = f.Close() }()
		h, err := ReadHeader(f)
		if err != nil {
			return 0, err
		}
		return h.Duration(), nil
	}
	bin, err := exec.LookPath("ffprobe")
	if err != nil {
		return 0, &UnavailableError{Reason: ReasonNoFFmpeg}
	}
	out, err := runTool(ctx, bin, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path)
	if err != nil {
		return 0, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("ffprobe cannot read the %s file: %v", format, err)}
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if err != nil || secs < 0 {
		return 0, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("ffprobe reports no duration for the %s file (%q)", format, strings.TrimSpace(out))}
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// Header is what a WAV file's fmt and data chunks say.
type Header struct {
	AudioFormat   uint16 // 1 = integer PCM
	Channels      uint16
	SampleRate    uint32
	BitsPerSample uint16
	DataOffset    int64 // where the samples start
	DataBytes     int64
}

// Recognisable reports whether the samples are what a recogniser reads
// as they are, without decoding.
func (h Header) Recognisable() bool {
	return h.AudioFormat == 1 && h.Channels == Channels && h.SampleRate == SampleRate && h.BitsPerSample == BitsPerSample
}

// Duration is the length of the samples.
func (h Header) Duration() time.Duration {
	frame := int64(h.Channels) * int64(h.BitsPerSample/8)
	if frame == 0 || h.SampleRate == 0 {
		return 0
	}
	return time.Duration(h.DataBytes / frame * int64(time.Second) / int64(h.SampleRate))
}

// ReadHeader walks a RIFF/WAVE file's chunks to its fmt and data chunks.
// A data chunk whose size runs past the end of the file (streams written
// without knowing their length) is clipped to what is there.
func ReadHeader(r io.ReadSeeker) (Header, error) {
	bad := func(why string) error {
		return &steperr.InvalidDocumentError{Reason: "corrupt WAV file: " + why}
	}
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil || string(riff[:4]) != "RIFF" || string(riff[8:]) != "WAVE" {
		return Header{}, bad("no RIFF/WAVE header")
	}
	var h Header
	pos, haveFmt := int64(12), false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return Header{}, bad("no data chunk")
		}
		size := int64(binary.LittleEndian.Uint32(ch[4:]))
		pos += 8
		switch string(ch[:4]) {
		case "fmt ":
			if size < 16 {
				return Header{}, bad("fmt chunk too short")
			}
			var f [16]byte
			if _, err := io.ReadFull(r, f[:]); err != nil {
				return Header{}, bad("fmt chunk cut short")
			}
			h.AudioFormat = binary.LittleEndian.Uint16(f[0:])
			h.Channels = binary.LittleEndian.Uint16(f[2:])
			h.SampleRate = binary.LittleEndian.Uint32(f[4:])
			h.BitsPerSample = binary.LittleEndian.Uint16(f[14:])
			if h.AudioFormat == 0xFFFE && size >= 26 { // WAVE_FORMAT_EXTENSIBLE: the subformat says
				var ext [10]byte
				if _, err := io.ReadFull(r, ext[:]); err != nil {
					return Header{}, bad("fmt chunk cut short")
				}
				h.AudioFormat = binary.LittleEndian.Uint16(ext[8:])
				size -= 10
			}
			haveFmt = true
			if _, err := r.Seek(size-16+size%2, io.SeekCurrent); err != nil {
				return Header{}, err
			}
		case "data":
			if !haveFmt {
				return Header{}, bad("data chunk before the fmt chunk")
			}
			end, err := r.Seek(0, io.SeekEnd)
			if err != nil {
				return Header{}, err
			}
			h.DataOffset, h.DataBytes = pos, min(size, end-pos)
			return h, nil
		default:
			if _, err := r.Seek(size+size%2, io.SeekCurrent); err != nil {
				return Header{}, err
			}
		}
		pos += size + size%2
	}
}

// Recognisable returns a path to the file as 16 kHz mono 16-bit WAV: the
// file itself when it already is one, else a copy decoded by ffmpeg into
// dir. Without ffmpeg it returns an UnavailableError.
func Recognisable(ctx context.Context, path string, format extract.Format, dir string) (string, error) {
	if format == extract.FormatWAV {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		h, err := ReadHeader(f)
		_ = f.Close()
		if err != nil {
			return "", err
		}
		if h.Recognisable() {
			return path, nil
		}
	}
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return "", &UnavailableError{Reason: ReasonNoFFmpeg}
	}
	out := filepath.Join(dir, "decoded.wav")
	if _, err := runTool(ctx, bin, "-nostdin", "-v", "error", "-y", "-i", path,
		"-ar", strconv.Itoa(SampleRate), "-ac", strconv.Itoa(Channels), "-c:a", "pcm_s16le", "-f", "wav", out); err != nil {
		return "", &steperr.InvalidDocumentError{Reason: fmt.Sprintf("ffmpeg cannot decode the %s file: %v", format, err)}
	}
	return out, nil
}

// Cut writes the samples of span from a recognisable WAV file (see
// Recognisable) to a new WAV file at dst. A span ending at 0 means to the
// end.
func Cut(src string, span extract.Span, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	h, err := ReadHeader(f)
	if err != nil {
		return err
	}
	if !h.Recognisable() {
		return fmt.Errorf("audio: %s is not 16 kHz mono 16-bit PCM", filepath.Base(src))
	}
	const bytesPerMS = SampleRate / 1000 * BitsPerSample / 8
	from := min(span.StartMS*bytesPerMS, h.DataBytes)
	to := h.DataBytes
	if span.EndMS > 0 {
		to = min(span.EndMS*bytesPerMS, h.DataBytes)
	}
	n := max(to-from, 0)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := out.Write(wavHeader(n)); err != nil {
		_ = out.Close()
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(f, h.DataOffset+from, n)); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// wavHeader is the 44-byte header of a 16 kHz mono 16-bit PCM WAV file
// holding n bytes of samples.
func wavHeader(n int64) []byte {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(Channels))
	le(uint32(SampleRate))
	le(uint32(SampleRate * Channels * BitsPerSample / 8))
	le(uint16(Channels * BitsPerSample / 8))
	le(uint16(BitsPerSample))
	b.WriteString("data")
	le(uint32(n))
	return b.Bytes()
}

// runTool runs a media tool and returns its stdout, or an error carrying
// the first line of its error output.
func runTool(ctx context.Context, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	childproc.Tie(cmd)
	cmd.Env = childenv.Minimal(nil) // none of docpipe's credentials
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", filepath.Base(bin), ctx.Err())
		}
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New(msg)
	}
	return stdout.String(), nil
}
