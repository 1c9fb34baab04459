//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/testbin"
	"github.com/docpipe/docpipe/pipeline"
)

// The dashboard on AWS: `docpipe serve` against the deployment takes an
// upload, starts its execution on Step Functions (served by the queue
// worker), follows it to completed and shows its segments, all through
// the JSON API.
func TestDashboardOnAWS(t *testing.T) {
	t.Parallel()
	d := deploy(t, deployOptions{})
	base := startServe(t, d)

	body, err := os.ReadFile(samplePDF(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Uploads []struct {
			WorkflowID string `json:"workflow_id"`
			Status     string `json:"status"`
			Existing   bool   `json:"existing"`
		} `json:"uploads"`
	}
	postFile(t, base+"/api/uploads", "report.pdf", body, &up)
	if len(up.Uploads) != 1 || up.Uploads[0].WorkflowID == "" || up.Uploads[0].Existing {
		t.Fatalf("uploads %+v, want one new analysis", up.Uploads)
	}
	id := up.Uploads[0].WorkflowID

	var a struct {
		Workflow pipeline.Workflow `json:"workflow"`
		Progress struct {
			Status        string `json:"status"`
			SegmentsTotal int    `json:"segments_total"`
			SegmentsDone  int    `json:"segments_done"`
			Error         string `json:"error"`
		} `json:"progress"`
	}
	deadline := time.Now().Add(executionDeadline)
	for {
		getJSON(t, base+"/api/analyses/"+id+"?transitions=0", &a)
		if a.Progress.Status == string(pipeline.WorkflowCompleted) {
			break
		}
		if a.Progress.Status == string(pipeline.WorkflowFailed) {
			t.Fatalf("analysis %s failed: %s", id, a.Progress.Error)
		}
		if time.Now().After(deadline) {
			t.Fatalf("analysis %s still %s after %v", id, a.Progress.Status, executionDeadline)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if a.Progress.SegmentsTotal != 3 || a.Progress.SegmentsDone != 3 {
		t.Errorf("%d of %d segments done, want 3 of 3", a.Progress.SegmentsDone, a.Progress.SegmentsTotal)
	}
	if a.Workflow.ProjectID != project || !strings.Contains(a.Workflow.ExecutionID, ":execution:") {
		t.Errorf("workflow in project %q with execution %q, want project %s on Step Functions", a.Workflow.ProjectID, a.Workflow.ExecutionID, project)
	}

	var seg struct {
		Segment  pipeline.Segment `json:"segment"`
		Text     string           `json:"text"`
		Analysis json.RawMessage  `json:"analysis"`
	}
	getJSON(t, base+"/api/analyses/"+id+"/segments/2", &seg)
	if seg.Segment.Index != 2 || seg.Segment.Status != pipeline.SegmentDone || strings.TrimSpace(seg.Text) == "" || len(seg.Analysis) == 0 {
		t.Errorf("segment 2: %+v, %d characters of text, analysis %s", seg.Segment, len(seg.Text), seg.Analysis)
	}
}

// startServe runs `docpipe serve` on the deployment, on a free port, until
// the test ends, and returns its base URL.
func startServe(t *testing.T, d *deployment) string {
	t.Helper()
	cmd := docpipeCommand(context.Background(), testbin.Docpipe(t), "serve", "--listen", "127.0.0.1:0", "--project", project,
		"--table", d.Table, "--bucket", d.Bucket, "--state-machine", d.StateMachineARN)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// An interrupt is how a server is stopped: it exits 0.
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("docpipe serve: %v\n%s", err, stderr.String())
		}
	})
	const banner = "docpipe dashboard on "
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), banner); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return strings.TrimSuffix(url, "/")
		}
	}
	t.Fatalf("docpipe serve printed no address: %v\n%s", sc.Err(), stderr.String())
	return ""
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	decodeResponse(t, resp, http.StatusOK, v)
}

// postFile uploads one file as the upload page does.
func postFile(t *testing.T, url, name string, body []byte, v any) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, err := mw.CreateFormFile("file", name)
	if err == nil {
		_, err = part.Write(body)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	decodeResponse(t, resp, http.StatusCreated, v)
}

func decodeResponse(t *testing.T, resp *http.Response, want int, v any) {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(fmt.Errorf("%s: %w: %s", resp.Request.URL, err, raw))
	}
}
