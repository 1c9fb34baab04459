package awstranscribe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/transcribe"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/extract"
	dtranscribe "github.com/docpipe/docpipe/pipeline/transcribe"
)

// fakeTranscribe imitates the Transcribe JSON 1.1 API: the first start is
// throttled, then the job reports IN_PROGRESS once and then final.
func fakeTranscribe(t *testing.T, final string) (*transcribe.Client, *atomic.Int32) {
	var starts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "Transcribe.StartTranscriptionJob":
			if starts.Add(1) == 1 {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"__type":"LimitExceededException","Message":"Rate exceeded"}`)
				return
			}
			fmt.Fprint(w, `{"TranscriptionJob":{"TranscriptionJobName":"docpipe-wf1","TranscriptionJobStatus":"IN_PROGRESS","LanguageCode":"en-US"}}`)
		case "Transcribe.GetTranscriptionJob":
			fmt.Fprint(w, final)
		default:
			http.Error(w, "unknown target", http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	client := transcribe.New(transcribe.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.AnonymousCredentials{},
		Retryer:      retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = time.Millisecond }),
	})
	return client, &starts
}

func engine(t *testing.T, client *transcribe.Client) (*Engine, blob.Store) {
	store, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Client: client, Bucket: "docs", Blobs: store, Poll: time.Millisecond, MaxPoll: time.Millisecond, Timeout: time.Minute}, store
}

var job = dtranscribe.Job{Name: "wf1", Key: "p/d/source", Format: extract.FormatMP3,
	Spans: []extract.Span{{StartMS: 0, EndMS: 30000}, {StartMS: 30000, EndMS: 45000}}}

func TestCompletedJobIsDividedIntoSpans(t *testing.T) {
	client, starts := fakeTranscribe(t, `{"TranscriptionJob":{"TranscriptionJobName":"docpipe-wf1","TranscriptionJobStatus":"COMPLETED","Transcript":{"TranscriptFileUri":"https://s3.us-east-1.amazonaws.com/docs/transcribe/docpipe-wf1.json"}}}`)
	e, store := engine(t, client)
	raw, err := os.ReadFile("testdata/transcript.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(context.Background(), store, "transcribe/docpipe-wf1.json", raw); err != nil {
		t.Fatal(err)
	}
	res, err := e.Transcribe(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if starts.Load() != 2 {
		t.Errorf("StartTranscriptionJob was called %d times; the throttled call should be retried once", starts.Load())
	}
	if len(res) != 2 || res[0].Text != "Hello there." || res[1].Text != "Goodbye." || res[1].Words[0].StartMS != 31200 {
		t.Fatalf("results = %+v", res)
	}
}

func TestFailedJobGivesEverySpanItsReason(t *testing.T) {
	client, _ := fakeTranscribe(t, `{"TranscriptionJob":{"TranscriptionJobName":"docpipe-wf1","TranscriptionJobStatus":"FAILED","FailureReason":"The media format provided does not match the detected media format."}}`)
	e, _ := engine(t, client)
	res, err := e.Transcribe(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Err, dtranscribe.FailedPrefix) || !strings.Contains(r.Err, "does not match the detected media format") {
			t.Fatalf("span error = %q", r.Err)
		}
	}
}

func TestJobThatNeverEndsTimesOut(t *testing.T) {
	client, _ := fakeTranscribe(t, `{"TranscriptionJob":{"TranscriptionJobName":"docpipe-wf1","TranscriptionJobStatus":"IN_PROGRESS"}}`)
	e, _ := engine(t, client)
	e.Timeout = 20 * time.Millisecond
	_, err := e.Transcribe(context.Background(), job)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("error = %v, want a timeout", err)
	}
}
