package stagerun

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestHTTPStage(t *testing.T) {
	t.Parallel()
	var got struct {
		contentType, userAgent string
		body                   map[string]json.RawMessage
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.contentType, got.userAgent = r.Header.Get("Content-Type"), r.Header.Get("User-Agent")
		if err := json.NewDecoder(r.Body).Decode(&got.body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var seg Segment
		_ = json.Unmarshal(got.body["segment"], &seg)
		_ = json.NewEncoder(w).Encode(map[string]string{"text": strings.ToUpper(seg.Text)})
	}))
	t.Cleanup(srv.Close)

	res, err := NewHTTP(srv.URL, time.Minute, nil).Run(t.Context(), segmentRequest(t, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == nil || *res.Text != "HELLO" {
		t.Errorf("Text = %v", res.Text)
	}
	if got.contentType != "application/json" || !strings.HasPrefix(got.userAgent, "docpipe/") {
		t.Errorf("Content-Type %q, User-Agent %q", got.contentType, got.userAgent)
	}
	if string(got.body["inputs"]) != "{}" || !strings.Contains(string(got.body["inputs_inline"]), `"ocr":{"confidence":0.9}`) {
		t.Errorf("inputs %s, inputs_inline %s: want no local paths and the needs inline", got.body["inputs"], got.body["inputs_inline"])
	}
}

func TestHTTPStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
		reason []string
	}{
		{"429 is transient", http.StatusTooManyRequests, "slow down", steperr.NameTransient, []string{"shout: HTTP 429 Too Many Requests: slow down"}},
		{"500 is transient", http.StatusInternalServerError, "oops", steperr.NameTransient, []string{"shout: HTTP 500 Internal Server Error: oops"}},
		{"503 is transient", http.StatusServiceUnavailable, "", steperr.NameTransient, []string{"shout: HTTP 503 Service Unavailable"}},
		{"400 is permanent", http.StatusBadRequest, strings.Repeat("noise\n", 1000) + `{"error": "missing field"}`,
			steperr.NameStageFailed, []string{"shout: HTTP 400 Bad Request: ", `noise` + "\n" + `{"error": "missing field"}`}},
		{"404 is permanent", http.StatusNotFound, "no such stage", steperr.NameStageFailed, []string{"HTTP 404 Not Found: no such stage"}},
		{"200 not JSON", http.StatusOK, "<html>", steperr.NameStageFailed, []string{"shout: stage output is not JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			_, err := NewHTTP(srv.URL, time.Minute, srv.Client()).Run(t.Context(), segmentRequest(t, "x"))
			wantErr(t, err, tc.want, tc.reason...)
			if len(err.Error()) > reasonBytes+100 {
				t.Errorf("reason is %d bytes, want the body's tail only", len(err.Error()))
			}
		})
	}
}

func TestHTTPOutputTooLarge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `"`+strings.Repeat("a", 2000)+`"`)
	}))
	t.Cleanup(srv.Close)
	h := NewHTTP(srv.URL, time.Minute, nil)
	h.MaxOutput = 1000
	_, err := h.Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameStageFailed, "shout: output too large (over 1000 bytes)")
}

func TestHTTPSlowServiceTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	_, err := NewHTTP(srv.URL, 200*time.Millisecond, nil).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameTransient, "shout: timed out after 0.2s")
}

func TestHTTPCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a closed connection only after the body
		cancel()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	_, err := NewHTTP(srv.URL, time.Minute, nil).Run(ctx, segmentRequest(t, "x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHTTPConnectionRefusedIsTransient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := NewHTTP(url, time.Minute, nil).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameTransient, "shout: ", "connection refused")
}

func TestHTTPConnectionResetIsTransient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	_, err := NewHTTP(srv.URL, time.Minute, nil).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameTransient, "shout: ")
}

func TestHTTPBadCertificateIsPermanent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	// The default client does not trust the test server's certificate.
	_, err := NewHTTP(srv.URL, time.Minute, &http.Client{}).Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameStageFailed, "certificate")
}

func TestHTTPURLMustBeHTTP(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"ftp://example.com/stage", "://nope"} {
		_, err := NewHTTP(url, time.Minute, nil).Run(t.Context(), segmentRequest(t, "x"))
		wantErr(t, err, steperr.NameStageFailed, "shout: ")
	}
}

// A failing stage's reason names its URL without the URL's secrets.
func TestHTTPErrorsHideURLSecrets(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	refused := strings.Replace(srv.URL, "http://", "http://user:PASSWORD-81@", 1) + "/x?api_key=KEY-82"
	srv.Close()
	for _, url := range []string{refused, "ftp://user:PASSWORD-81@example.com/?token=KEY-82"} {
		_, err := NewHTTP(url, time.Minute, nil).Run(t.Context(), segmentRequest(t, "x"))
		if err == nil || strings.Contains(err.Error(), "PASSWORD-81") || strings.Contains(err.Error(), "KEY-82") {
			t.Errorf("%s: error %v shows a secret", url, err)
		}
	}
}

// Headers come from the environment at every request; an unset variable
// fails the stage for good without sending anything.
func TestHTTPHeadersFromEnv(t *testing.T) {
	t.Parallel()
	var auth atomic.Value
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"CLASSIFIER_AUTH": "Bearer tok-1"}
	h := NewHTTP(srv.URL, time.Minute, nil).WithHeaderEnv(map[string]string{"Authorization": "CLASSIFIER_AUTH"})
	h.Getenv = func(k string) string { return env[k] }
	if _, err := h.Run(t.Context(), segmentRequest(t, "x")); err != nil {
		t.Fatal(err)
	}
	if got := auth.Load(); got != "Bearer tok-1" {
		t.Errorf("Authorization %q", got)
	}
	delete(env, "CLASSIFIER_AUTH")
	_, err := h.Run(t.Context(), segmentRequest(t, "x"))
	wantErr(t, err, steperr.NameStageFailed, "CLASSIFIER_AUTH is not set")
	if hits.Load() != 1 {
		t.Errorf("%d requests, want 1", hits.Load())
	}
}
