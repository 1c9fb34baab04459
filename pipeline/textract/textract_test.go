package textract

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

func testClient(url string) *Client {
	return New(aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(url), Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
}

func checkRequest(t *testing.T, r *http.Request, op string) map[string]any {
	t.Helper()
	if r.Header.Get("X-Amz-Target") != "Textract."+op || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Errorf("target %q, content type %q", r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"))
	}
	if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/textract/aws4_request") {
		t.Errorf("Authorization %q is not a SigV4 signature for textract", auth)
	}
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		t.Error(err)
	}
	return in
}

func TestDetectTextReplaysBlocksAfterThrottling(t *testing.T) {
	reply, err := os.ReadFile("testdata/detect_document_text.json")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := checkRequest(t, r, "DetectDocumentText")
		if doc, _ := in["Document"].(map[string]any); doc["Bytes"] != "iVBORw==" { // base64 of the image bytes
			t.Errorf("document %v", in["Document"])
		}
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"__type":"com.amazonaws.textract#ProvisionedThroughputExceededException","message":"slow down"}`))
			return
		}
		w.Write(reply)
	}))
	defer srv.Close()
	text, err := testClient(srv.URL).DetectText(context.Background(), []byte{0x89, 'P', 'N', 'G'})
	if err != nil || calls.Load() != 2 {
		t.Fatalf("got %v after %d calls", err, calls.Load())
	}
	if text != "INVOICE 2024-117\nMüller GmbH, Berlin" {
		t.Fatalf("text %q", text)
	}
}

func TestAsyncDetectionPagesThroughResults(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Amz-Target") {
		case "Textract.StartDocumentTextDetection":
			in := checkRequest(t, r, "StartDocumentTextDetection")
			loc, _ := json.Marshal(in["DocumentLocation"])
			if string(loc) != `{"S3Object":{"Bucket":"docs","Name":"a.pdf"}}` {
				t.Errorf("location %s", loc)
			}
			w.Write([]byte(`{"JobId":"job-1"}`))
		default:
			in := checkRequest(t, r, "GetDocumentTextDetection")
			switch gets.Add(1) {
			case 1:
				w.Write([]byte(`{"JobStatus":"IN_PROGRESS"}`))
			case 2:
				w.Write([]byte(`{"JobStatus":"SUCCEEDED","NextToken":"t2","Blocks":[{"BlockType":"LINE","Text":"one","Page":1},{"BlockType":"WORD","Text":"one","Page":1}]}`))
			default:
				if in["NextToken"] != "t2" {
					t.Errorf("next token %v", in["NextToken"])
				}
				w.Write([]byte(`{"JobStatus":"SUCCEEDED","Blocks":[{"BlockType":"LINE","Text":"two","Page":2},{"BlockType":"LINE","Text":"lines","Page":2}]}`))
			}
		}
	}))
	defer srv.Close()
	c := testClient(srv.URL)
	job, err := c.StartDetection(context.Background(), "docs", "a.pdf")
	if err != nil || job != "job-1" {
		t.Fatalf("start: %q %v", job, err)
	}
	pages, err := c.WaitDetection(context.Background(), job, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[1] != "one" || pages[2] != "two\nlines" {
		t.Fatalf("pages %v", pages)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"__type":"com.amazonaws.textract#UnsupportedDocumentException","message":"Request has unsupported document format"}`))
	}))
	defer srv.Close()
	_, err := testClient(srv.URL).DetectText(context.Background(), []byte("x"))
	var failed *steperr.StageFailedError
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "UnsupportedDocumentException") {
		t.Fatalf("want stage failed, got %v", err)
	}
}
