package transcribe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline/childenv"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/audio"

	"github.com/docpipe/docpipe/internal/childproc"
)

// ReasonNoPocketsphinx is given when the recogniser is not installed.
const ReasonNoPocketsphinx = "transcription skipped: pocketsphinx is not installed (apt-get install pocketsphinx pocketsphinx-en-us)"

// DefaultModel is where Debian's pocketsphinx-en-us installs the US
// English acoustic model, language model and dictionary.
const DefaultModel = "/usr/share/pocketsphinx/model/en-us"

// Pocketsphinx runs `pocketsphinx_continuous -infile SPAN.wav -time yes`
// once per span: the audio is decoded to 16 kHz mono WAV once (by ffmpeg
// unless it already is one) and cut into spans in Go. Set fields before the
// first call; it is safe for concurrent use.
type Pocketsphinx struct {
	Binary  string        // command name or path; default "pocketsphinx_continuous"
	Model   string        // directory with en-us/, en-us.lm.bin and cmudict-en-us.dict; default DefaultModel
	Timeout time.Duration // per span; default 10 minutes

	once   sync.Once
	ok     bool
	reason string
}

// NewPocketsphinx returns the engine with the default model.
func NewPocketsphinx() *Pocketsphinx { return &Pocketsphinx{} }

// Name is "pocketsphinx".
func (p *Pocketsphinx) Name() string { return "pocketsphinx" }

func (p *Pocketsphinx) binary() string {
	if p.Binary != "" {
		return p.Binary
	}
	return "pocketsphinx_continuous"
}

func (p *Pocketsphinx) model() (hmm, lm, dict string) {
	dir := p.Model
	if dir == "" {
		dir = DefaultModel
	}
	return filepath.Join(dir, "en-us"), filepath.Join(dir, "en-us.lm.bin"), filepath.Join(dir, "cmudict-en-us.dict")
}

// Available finds the recogniser and its model, and ffmpeg for any format
// but WAV (a WAV file that is not 16 kHz mono finds out when decoded).
func (p *Pocketsphinx) Available(format extract.Format) (bool, string) {
	p.once.Do(func() {
		if _, err := exec.LookPath(p.binary()); err != nil {
			p.reason = ReasonNoPocketsphinx
			return
		}
		hmm, lm, dict := p.model()
		for _, f := range []string{hmm, lm, dict} {
			if _, err := os.Stat(f); err != nil {
				p.reason = fmt.Sprintf("transcription skipped: the pocketsphinx model %s is missing (apt-get install pocketsphinx-en-us)", f)
				return
			}
		}
		p.ok = true
	})
	if !p.ok {
		return false, p.reason
	}
	if format != extract.FormatWAV {
		if _, err := exec.LookPath("ffmpeg"); err != nil {
			return false, audio.ReasonNoFFmpeg
		}
	}
	return true, ""
}

// Transcribe recognises every span of the job.
func (p *Pocketsphinx) Transcribe(ctx context.Context, job Job) ([]Result, error) {
	if ok, reason := p.Available(job.Format); !ok {
		return nil, &UnavailableError{Reason: reason}
	}
	dir, err := os.MkdirTemp(job.Dir, "docpipe-audio-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	wav, err := audio.Recognisable(ctx, job.Path, job.Format, dir)
	if err != nil {
		var unavailable *audio.UnavailableError
		if errors.As(err, &unavailable) {
			return nil, &UnavailableError{Reason: unavailable.Reason}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The file cannot be decoded: every span fails with the reason.
		out := make([]Result, len(job.Spans))
		for i := range out {
			out[i].Err = FailedPrefix + ": " + err.Error()
		}
		return out, nil
	}
	out := make([]Result, len(job.Spans))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(job.Parallelism, 1))
	for i, span := range job.Spans {
		g.Go(func() error {
			cut := filepath.Join(dir, fmt.Sprintf("span-%06d.wav", i+1))
			if err := audio.Cut(wav, span, cut); err != nil {
				return err
			}
			defer os.Remove(cut)
			words, err := p.recognise(gctx, cut)
			switch {
			case gctx.Err() != nil:
				return gctx.Err()
			case err != nil:
				out[i].Err = FailedPrefix + ": " + err.Error()
				return nil
			}
			for k := range words {
				words[k].StartMS += span.StartMS
				words[k].EndMS += span.StartMS
			}
			out[i] = Result{Text: joinWords(words), Words: words}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// recognise runs the recogniser on one span file.
func (p *Pocketsphinx) recognise(ctx context.Context, wav string) ([]Word, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hmm, lm, dict := p.model()
	cmd := exec.CommandContext(runCtx, p.binary(), "-infile", wav, "-hmm", hmm, "-lm", lm, "-dict", dict,
		"-time", "yes", "-logfn", os.DevNull)
	childproc.Tie(cmd)
	cmd.Env = childenv.Minimal(nil) // none of docpipe's credentials
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		if runCtx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("pocketsphinx timed out after %s", timeout)
		}
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("pocketsphinx: %s", msg)
	}
	return parseTimes(string(stdout)), nil
}

// parseTimes reads the word lines of `-time yes` output ("WORD START END
// CONFIDENCE", seconds), dropping the hypothesis lines, sentence and
// silence markers and noise, and the "(2)" that marks an alternative
// pronunciation.
func parseTimes(out string) []Word {
	var words []Word
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		start, err1 := strconv.ParseFloat(f[1], 64)
		end, err2 := strconv.ParseFloat(f[2], 64)
		if _, err3 := strconv.ParseFloat(f[3], 64); err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		w := f[0]
		if strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "+") {
			continue
		}
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		words = append(words, Word{Text: w, StartMS: int64(start*1000 + 0.5), EndMS: int64(end*1000 + 0.5)})
	}
	return words
}
