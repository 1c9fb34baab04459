package stagerun

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"time"

	"github.com/docpipe/docpipe/internal/redact"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// errorBodyBytes bounds how much of a failed response is read for its
// reason.
const errorBodyBytes = 64 << 10

// HTTP runs a stage as a POST to a service: the request as the body, the
// output as a 2xx response body.
type HTTP struct {
	URL string
	// Timeout bounds one request, connection to last byte; zero means
	// none.
	Timeout time.Duration
	// Client sends the requests; its own Timeout, if any, also applies.
	Client *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// MaxOutput bounds the response body in bytes.
	MaxOutput int64
	// MaxRequest bounds the request body, inline inputs included.
	MaxRequest int
	// HeaderEnv maps headers to send to the environment variables that
	// hold their values, read at every request.
	HeaderEnv map[string]string
	// Getenv reads them; nil means os.Getenv.
	Getenv func(string) string
}

// WithHeaderEnv sets HeaderEnv and returns h.
func (h *HTTP) WithHeaderEnv(m map[string]string) *HTTP {
	h.HeaderEnv = m
	return h
}

// NewHTTP returns a runner posting to url, bounded by timeout. A nil
// client means http.DefaultClient.
func NewHTTP(url string, timeout time.Duration, client *http.Client) *HTTP {
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTP{
		URL: url, Timeout: timeout, Client: client,
		UserAgent: "docpipe/" + version(),
		MaxOutput: DefaultMaxOutput, MaxRequest: DefaultMaxInline,
	}
}

// Run posts the request and classifies the answer: 2xx is the output,
// 429 and 5xx are transient, anything else is permanent; a connection
// that fails or times out is transient.
func (h *HTTP) Run(ctx context.Context, req Request) (Result, error) {
	body, err := remotePayload(req, h.MaxRequest)
	if err != nil {
		return Result{}, err
	}
	runCtx, cancel := withTimeout(ctx, h.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(runCtx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err == nil && hreq.URL.Scheme != "http" && hreq.URL.Scheme != "https" {
		err = fmt.Errorf("%q is not an http or https URL", redact.URL(h.URL))
	}
	if err != nil {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %v", req.Stage, withoutURL(err, h.URL))}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", h.UserAgent)
	if err := h.setHeaders(hreq.Header, req.Stage); err != nil {
		return Result{}, err
	}

	resp, err := h.Client.Do(hreq)
	if err != nil {
		return Result{}, h.sendError(ctx, runCtx, req.Stage, withoutURL(err, h.URL))
	}
	defer func() { _ = resp.Body.Close() }()

	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	limit := h.MaxOutput
	if !ok {
		limit = errorBodyBytes
	}
	out, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return Result{}, h.sendError(ctx, runCtx, req.Stage, err)
	}
	if !ok {
		return Result{}, statusError(req.Stage, resp.Status, resp.StatusCode, out)
	}
	if int64(len(out)) > limit {
		return Result{}, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: output too large (over %d bytes)", req.Stage, limit)}
	}
	return parseOutput(req.Stage, req.Scope, out)
}

// sendError classifies a request that got no complete answer. The
// caller's cancellation is returned as it is; the stage's timeout and
// network faults are transient; a bad URL or a certificate the client
// refuses is permanent, since retrying cannot change it.
func (h *HTTP) sendError(ctx, runCtx context.Context, stage string, err error) error {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalidCert      x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
	)
	switch {
	case context.Cause(runCtx) == errStageTimeout:
		return timedOut(stage, h.Timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", stage, context.Cause(ctx))
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname),
		errors.As(err, &invalidCert), errors.As(err, &verify):
		return &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %v", stage, err)}
	}
	return &steperr.TransientError{Reason: fmt.Sprintf("%s: %v", stage, err)}
}

// setHeaders adds the headers read from the environment. An unset
// variable fails the stage for good: retrying will not set it.
func (h *HTTP) setHeaders(hdr http.Header, stage string) error {
	getenv := h.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for name, env := range h.HeaderEnv {
		v := getenv(env)
		if v == "" {
			return &steperr.StageFailedError{Reason: fmt.Sprintf("%s: header %s: environment variable %s is not set", stage, name, env)}
		}
		hdr.Set(name, v)
	}
	return nil
}

// withoutURL replaces the URL a url.Error quotes, which may carry
// credentials, with its redacted form.
func withoutURL(err error, rawURL string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: redact.URL(rawURL), Err: ue.Err}
	}
	return err
}

// statusError classifies a non-2xx answer; its reason ends with the tail
// of the body.
func statusError(stage, status string, code int, body []byte) error {
	reason := fmt.Sprintf("%s: HTTP %s", stage, status)
	if tail := tailOf(body); tail != "" {
		reason += ": " + tail
	}
	if code == http.StatusTooManyRequests || code >= 500 {
		return &steperr.TransientError{Reason: reason}
	}
	return &steperr.StageFailedError{Reason: reason}
}

// version is the module version docpipe was built at, for the
// User-Agent.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
