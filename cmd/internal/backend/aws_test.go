package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/docpipe/docpipe/pipeline/driver/awstranscribe"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/transcribe"
)

// startRequest is the part of StartTranscriptionJob's input the test checks.
type startRequest struct {
	OutputBucketName string
	OutputKey        string
	Media            struct{ MediaFileUri string }
}

// fakeTranscribe answers StartTranscriptionJob and reports the job FAILED,
// so the engine reads no transcript; it records each start.
func fakeTranscribe(t *testing.T) (aws.Config, func() []startRequest) {
	t.Helper()
	var mu sync.Mutex
	var starts []startRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "Transcribe.StartTranscriptionJob":
			var in startRequest
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			starts = append(starts, in)
			mu.Unlock()
			fmt.Fprint(w, `{"TranscriptionJob":{"TranscriptionJobStatus":"IN_PROGRESS"}}`)
		case "Transcribe.GetTranscriptionJob":
			fmt.Fprint(w, `{"TranscriptionJob":{"TranscriptionJobStatus":"FAILED","FailureReason":"no speech"}}`)
		default:
			http.Error(w, "unexpected request "+r.Header.Get("X-Amz-Target"), http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}}
	return cfg, func() []startRequest {
		mu.Lock()
		defer mu.Unlock()
		return starts
	}
}

func openFakeAWS(t *testing.T, cfg aws.Config) (AWSClients, *Backend) {
	t.Helper()
	clients := NewAWSClients(cfg)
	b, err := OpenAWSWith(clients, AWSOptions{Table: "docpipe", Bucket: "docpipe-blobs"})
	if err != nil {
		t.Fatal(err)
	}
	return clients, b
}

func TestAWSTranscriberAWSUsesTheBlobBucket(t *testing.T) {
	t.Parallel()
	cfg, starts := fakeTranscribe(t)
	clients, b := openFakeAWS(t, cfg)
	eng, err := AWSTranscriber("aws", clients, b)
	if err != nil {
		t.Fatal(err)
	}
	at, ok := eng.(*awstranscribe.Engine)
	if !ok {
		t.Fatalf("engine %T (%s), want Amazon Transcribe", eng, eng.Name())
	}
	if at.Bucket != "docpipe-blobs" || at.Blobs != b.Blobs {
		t.Errorf("engine on bucket %q, blobs %v; want the backend's bucket and store", at.Bucket, at.Blobs)
	}

	job := transcribe.Job{Name: "wf1", Key: "p/d/source", Format: extract.FormatMP3,
		Spans: []extract.Span{{StartMS: 0, EndMS: 30000}}}
	results, err := eng.Transcribe(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || !strings.HasPrefix(results[0].Err, transcribe.FailedPrefix) {
		t.Errorf("results %+v, want the job's failure on the span", results)
	}
	got := starts()
	if len(got) != 1 {
		t.Fatalf("%d jobs started, want 1", len(got))
	}
	if got[0].Media.MediaFileUri != "s3://docpipe-blobs/p/d/source" {
		t.Errorf("media %q, want the document in the blob bucket", got[0].Media.MediaFileUri)
	}
	if got[0].OutputBucketName != "docpipe-blobs" || !strings.HasPrefix(got[0].OutputKey, "transcribe/") {
		t.Errorf("output s3://%s/%s, want s3://docpipe-blobs/transcribe/...", got[0].OutputBucketName, got[0].OutputKey)
	}
}

func TestAWSTranscriberDefaultIsLocal(t *testing.T) {
	t.Parallel()
	cfg, starts := fakeTranscribe(t)
	clients, b := openFakeAWS(t, cfg)
	for _, setting := range []string{"", "none"} {
		eng, err := AWSTranscriber(setting, clients, b)
		if err != nil {
			t.Fatalf("%q: %v", setting, err)
		}
		if eng.Name() != "pocketsphinx" {
			t.Errorf("%q: engine %s, want pocketsphinx", setting, eng.Name())
		}
	}
	if n := len(starts()); n != 0 {
		t.Errorf("%d Amazon Transcribe jobs started without %s=aws", n, EnvTranscribe)
	}
}

func TestAWSTranscriberRejectsUnknownSetting(t *testing.T) {
	t.Parallel()
	cfg, _ := fakeTranscribe(t)
	clients, b := openFakeAWS(t, cfg)
	if eng, err := AWSTranscriber("AWS", clients, b); err == nil {
		t.Errorf("setting AWS gave %s, want an error naming the accepted values", eng.Name())
	}
}

func TestMissingLocalRecogniserSuggestsAmazonTranscribe(t *testing.T) {
	t.Parallel()
	eng := suggestAWS{&transcribe.Pocketsphinx{Binary: "docpipe-no-such-recogniser"}}
	ok, reason := eng.Available(extract.FormatWAV)
	if ok {
		t.Fatal("a recogniser that is not installed is available")
	}
	if !strings.HasPrefix(reason, transcribe.ReasonNoPocketsphinx) || !strings.Contains(reason, "DOCPIPE_TRANSCRIBE=aws") {
		t.Errorf("reason %q, want pocketsphinx's reason and the Amazon Transcribe setting", reason)
	}
}
