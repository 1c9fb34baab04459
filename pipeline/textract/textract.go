// Package textract is a small client of Amazon Textract's text detection:
// DetectDocumentText for one page image, and StartDocumentTextDetection
// with GetDocumentTextDetection for a whole PDF in S3. The module proxy
// serves no Textract SDK package, so it calls the JSON 1.1 API through the
// SDK's own SigV4 signer, endpoint rules and standard retryer.
package textract

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// Client calls Textract in one region.
type Client struct {
	cfg      aws.Config
	endpoint string
	retryer  aws.Retryer
	signer   *v4.Signer
	http     aws.HTTPClient
}

// New is a client for cfg's region. The endpoint is cfg.BaseEndpoint,
// else AWS_ENDPOINT_URL_TEXTRACT or AWS_ENDPOINT_URL, else the regional
// https://textract.<region>.amazonaws.com.
func New(cfg aws.Config) *Client {
	ep := aws.ToString(cfg.BaseEndpoint)
	for _, env := range []string{"AWS_ENDPOINT_URL_TEXTRACT", "AWS_ENDPOINT_URL"} {
		if ep == "" {
			ep = os.Getenv(env)
		}
	}
	if ep == "" {
		ep = "https://textract." + cfg.Region + ".amazonaws.com"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{cfg: cfg, endpoint: strings.TrimRight(ep, "/"), retryer: retry.NewStandard(), signer: v4.NewSigner(), http: hc}
}

// Block is a piece of detected text.
type Block struct {
	BlockType  string  `json:"BlockType"` // PAGE, LINE or WORD
	Text       string  `json:"Text"`
	Page       int     `json:"Page"`
	Confidence float64 `json:"Confidence"`
}

type detectOutput struct {
	Blocks           []Block `json:"Blocks"`
	DocumentMetadata struct {
		Pages int `json:"Pages"`
	} `json:"DocumentMetadata"`
	JobStatus     string `json:"JobStatus"`
	StatusMessage string `json:"StatusMessage"`
	NextToken     string `json:"NextToken"`
	JobID         string `json:"JobId"`
}

// DetectText reads one page image (PNG, JPEG, TIFF, or a one-page PDF)
// and returns its lines, in reading order, joined by newlines.
func (c *Client) DetectText(ctx context.Context, image []byte) (string, error) {
	var out detectOutput
	if err := c.call(ctx, "DetectDocumentText", map[string]any{"Document": map[string]any{"Bytes": image}}, &out); err != nil {
		return "", err
	}
	return Lines(out.Blocks)[1], nil
}

// StartDetection starts reading a PDF (or image) in S3 and returns the job id.
func (c *Client) StartDetection(ctx context.Context, bucket, key string) (string, error) {
	var out detectOutput
	in := map[string]any{"DocumentLocation": map[string]any{"S3Object": map[string]string{"Bucket": bucket, "Name": key}}}
	if err := c.call(ctx, "StartDocumentTextDetection", in, &out); err != nil {
		return "", err
	}
	return out.JobID, nil
}

// WaitDetection polls a job every interval until it ends and returns the
// text of each page by page number.
func (c *Client) WaitDetection(ctx context.Context, jobID string, interval time.Duration) (map[int]string, error) {
	var blocks []Block
	next := ""
	for {
		in := map[string]any{"JobId": jobID}
		if next != "" {
			in["NextToken"] = next
		}
		var out detectOutput
		if err := c.call(ctx, "GetDocumentTextDetection", in, &out); err != nil {
			return nil, err
		}
		switch out.JobStatus {
		case "IN_PROGRESS":
			select {
			case <-ctx.Done():
				return nil, &steperr.TransientError{Reason: "textract job " + jobID + ": " + ctx.Err().Error()}
			case <-time.After(interval):
			}
			continue
		case "SUCCEEDED", "PARTIAL_SUCCESS":
		default:
			return nil, &steperr.StageFailedError{Reason: fmt.Sprintf("textract job %s: %s %s", jobID, out.JobStatus, out.StatusMessage)}
		}
		blocks = append(blocks, out.Blocks...)
		if next = out.NextToken; next == "" {
			return Lines(blocks), nil
		}
	}
}

// Lines joins the LINE blocks of each page with newlines, by page number
// (a page image's blocks carry no page: they are page 1).
func Lines(blocks []Block) map[int]string {
	pages := map[int][]string{}
	for _, b := range blocks {
		if b.BlockType == "LINE" {
			p := max(b.Page, 1)
			pages[p] = append(pages[p], b.Text)
		}
	}
	out := make(map[int]string, len(pages))
	for p, lines := range pages {
		out[p] = strings.Join(lines, "\n")
	}
	return out
}

// maxResponseBytes bounds a response read into memory.
const maxResponseBytes = 64 << 20

// call signs and sends one operation, retrying what the standard retryer
// deems retryable (throttling, 5xx, dropped connections) with its backoff.
func (c *Client) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	for attempt := 1; ; attempt++ {
		err := c.send(ctx, op, body, hash, out)
		if err == nil {
			return nil
		}
		if attempt >= c.retryer.MaxAttempts() || !c.retryer.IsErrorRetryable(err) || ctx.Err() != nil {
			return classify(op, err)
		}
		delay, derr := c.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return classify(op, err)
		}
		select {
		case <-ctx.Done():
			return classify(op, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// apiError is a Textract error response; it answers the retryer's
// questions about throttling and retryability.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d): %s", e.code, e.status, e.msg) }

func (e *apiError) ErrorCode() string { return e.code }

func (e *apiError) RetryableError() bool {
	return e.status == http.StatusTooManyRequests || e.status >= 500 || e.code == "ThrottlingException" ||
		e.code == "ProvisionedThroughputExceededException" || e.code == "LimitExceededException"
}

func (c *Client) send(ctx context.Context, op string, body []byte, hash string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "Textract."+op)
	creds, err := c.cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return &steperr.StageFailedError{Reason: "textract: AWS credentials: " + err.Error()}
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, "textract", c.cfg.Region, time.Now()); err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err // the retryer knows connection errors
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		json.Unmarshal(raw, &e)
		code := e.Type[strings.LastIndex(e.Type, "#")+1:]
		if code == "" {
			code = http.StatusText(resp.StatusCode)
		}
		return &apiError{status: resp.StatusCode, code: code, msg: e.Message}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &steperr.StageFailedError{Reason: fmt.Sprintf("textract %s: the response is not JSON: %v", op, err)}
	}
	return nil
}

// classify turns what is left after the retries into a step error.
func classify(op string, err error) error {
	if errors.As(err, new(*steperr.StageFailedError)) || errors.Is(err, context.Canceled) {
		return err
	}
	var api *apiError
	if errors.As(err, &api) && !api.RetryableError() {
		return &steperr.StageFailedError{Reason: fmt.Sprintf("textract %s: %v", op, err)}
	}
	return &steperr.TransientError{Reason: fmt.Sprintf("textract %s: %v", op, err)}
}
