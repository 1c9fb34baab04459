// Package awstranscribe transcribes audio documents with Amazon Transcribe:
// one StartTranscriptionJob on the document's S3 object, GetTranscriptionJob
// polled with backoff until the job ends, and the transcript JSON read back
// from the output key it was told to write. Throttled calls are retried by
// the SDK's retryer.
package awstranscribe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/transcribe"
	"github.com/aws/aws-sdk-go-v2/service/transcribe/types"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	dtranscribe "github.com/docpipe/docpipe/pipeline/transcribe"
)

// API is the part of the Transcribe client the engine calls.
type API interface {
	StartTranscriptionJob(ctx context.Context, in *transcribe.StartTranscriptionJobInput, opts ...func(*transcribe.Options)) (*transcribe.StartTranscriptionJobOutput, error)
	GetTranscriptionJob(ctx context.Context, in *transcribe.GetTranscriptionJobInput, opts ...func(*transcribe.Options)) (*transcribe.GetTranscriptionJobOutput, error)
}

// Engine is Amazon Transcribe over the documents in Bucket. Its
// transcripts are written to and read from the same bucket through Blobs.
type Engine struct {
	Client   API
	Bucket   string
	Blobs    blob.Store
	Language string // default "en-US"
	// Poll is the first wait between status checks, doubled up to
	// MaxPoll; Timeout bounds the whole job.
	Poll, MaxPoll, Timeout time.Duration
}

// Name is "amazon-transcribe".
func (e *Engine) Name() string { return "amazon-transcribe" }

// Available: Transcribe reads every format docpipe recognises as audio.
func (e *Engine) Available(extract.Format) (bool, string) { return true, "" }

// transcript is the output JSON's shape.
type transcript struct {
	Results struct {
		Transcripts []struct {
			Transcript string `json:"transcript"`
		} `json:"transcripts"`
		Items []struct {
			StartTime    string `json:"start_time"`
			EndTime      string `json:"end_time"`
			Type         string `json:"type"` // pronunciation or punctuation
			Alternatives []struct {
				Content string `json:"content"`
			} `json:"alternatives"`
		} `json:"items"`
	} `json:"results"`
}

var unsafeName = regexp.MustCompile(`[^0-9a-zA-Z._-]`)

// Transcribe runs (or, on a retried step, finds) the job named after
// job.Name, waits for it and divides its words among the spans. A job that
// fails gives every span its FailureReason.
func (e *Engine) Transcribe(ctx context.Context, job dtranscribe.Job) ([]dtranscribe.Result, error) {
	name := "docpipe-" + unsafeName.ReplaceAllString(job.Name, "-")
	outKey := "transcribe/" + name + ".json"
	lang := e.Language
	if lang == "" {
		lang = "en-US"
	}
	_, err := e.Client.StartTranscriptionJob(ctx, &transcribe.StartTranscriptionJobInput{
		TranscriptionJobName: aws.String(name),
		LanguageCode:         types.LanguageCode(lang),
		Media:                &types.Media{MediaFileUri: aws.String("s3://" + e.Bucket + "/" + job.Key)},
		MediaFormat:          types.MediaFormat(job.Format),
		OutputBucketName:     aws.String(e.Bucket),
		OutputKey:            aws.String(outKey),
	})
	var conflict *types.ConflictException
	if err != nil && !errors.As(err, &conflict) { // a conflict: the job of an earlier attempt
		return nil, fmt.Errorf("amazon transcribe: start %s: %w", name, err)
	}
	status, err := e.wait(ctx, name)
	if err != nil {
		return nil, err
	}
	if status.TranscriptionJobStatus == types.TranscriptionJobStatusFailed {
		reason := dtranscribe.FailedPrefix + ": Amazon Transcribe: " + aws.ToString(status.FailureReason)
		out := make([]dtranscribe.Result, len(job.Spans))
		for i := range out {
			out[i].Err = reason
		}
		return out, nil
	}
	raw, err := blob.GetBytes(ctx, e.Blobs, outKey, 256<<20)
	if err != nil {
		return nil, fmt.Errorf("amazon transcribe: read %s: %w", outKey, err)
	}
	var t transcript
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("amazon transcribe: %s is not a transcript: %w", outKey, err)
	}
	var words []dtranscribe.Word
	for _, it := range t.Results.Items {
		if len(it.Alternatives) == 0 {
			continue
		}
		w := dtranscribe.Word{Text: it.Alternatives[0].Content}
		if it.Type == "punctuation" && len(words) > 0 { // punctuation has no time of its own
			w.StartMS, w.EndMS = words[len(words)-1].EndMS, words[len(words)-1].EndMS
		} else {
			w.StartMS, w.EndMS = millis(it.StartTime), millis(it.EndTime)
		}
		words = append(words, w)
	}
	return dtranscribe.BySpan(words, job.Spans), nil
}

// wait polls the job until it completes or fails, doubling the wait.
func (e *Engine) wait(ctx context.Context, name string) (*types.TranscriptionJob, error) {
	poll, maxPoll, timeout := e.Poll, e.MaxPoll, e.Timeout
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if maxPoll <= 0 {
		maxPoll = time.Minute
	}
	if timeout <= 0 {
		timeout = 4 * time.Hour // Transcribe's own limit for one file
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		out, err := e.Client.GetTranscriptionJob(ctx, &transcribe.GetTranscriptionJobInput{TranscriptionJobName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("amazon transcribe: status of %s: %w", name, err)
		}
		if j := out.TranscriptionJob; j != nil && (j.TranscriptionJobStatus == types.TranscriptionJobStatusCompleted || j.TranscriptionJobStatus == types.TranscriptionJobStatusFailed) {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, fmt.Errorf("amazon transcribe: job %s did not finish within %s: %w", name, timeout, context.DeadlineExceeded)
		case <-time.After(poll):
		}
		poll = min(2*poll, maxPoll)
	}
}

func millis(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f*1000 + 0.5)
}
