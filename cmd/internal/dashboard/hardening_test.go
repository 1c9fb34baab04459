package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Without a token, only loopback names reach the dashboard: a page on
// another name that resolves to 127.0.0.1 (DNS rebinding) gets 421.
func TestHostMustBeLoopbackWithoutToken(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for host, want := range map[string]int{
		"127.0.0.1:8080": http.StatusOK, "127.0.0.1": http.StatusOK, "localhost": http.StatusOK, "LOCALHOST:9000": http.StatusOK,
		"[::1]:8080": http.StatusOK, "127.1.2.3:80": http.StatusOK,
		"rebind.attacker.example": http.StatusMisdirectedRequest, "rebind.attacker.example:8080": http.StatusMisdirectedRequest,
		"localhost.attacker.example": http.StatusMisdirectedRequest, "10.0.0.5:8080": http.StatusMisdirectedRequest, "": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/analyses", nil)
		req.Host = host
		if got := b.do(t, req).code; got != want {
			t.Errorf("Host %q: %d, want %d", host, got, want)
		}
	}
	// With a token the Host is not checked: the token is what guards it.
	tb := setup(t, func(o *Options) { o.Token = strings.Repeat("t", MinTokenLength) })
	req := httptest.NewRequest(http.MethodGet, "/api/analyses", nil)
	req.Host = "docpipe.example.com"
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("t", MinTokenLength))
	expectCode(t, tb.do(t, req), http.StatusOK)
}

// A 404 names what was asked for, never the table's keys.
func TestNotFoundHidesKeys(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, url := range []string{
		"/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ", "/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ/segments/1",
		"/api/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ/summary", "/api/pipelines/nobody", "/analyses/01ZZZZZZZZZZZZZZZZZZZZZZZZ",
	} {
		r := b.get(t, url)
		expectCode(t, r, http.StatusNotFound)
		if body := string(r.body); strings.Contains(body, "#") || strings.Contains(body, "table:") {
			t.Errorf("%s: %s", url, body)
		}
	}
}

func TestShortTokenRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if _, err := New(Options{Repo: b.repo, Blobs: b.blobs, Starter: b.starter, Token: "s3cret"}); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("New with a 6-character token: %v", err)
	}
	if err := CheckListen("0.0.0.0:8080", "s3cret", false); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("CheckListen with a 6-character token: %v", err)
	}
}

// Past MaxLiveSubscribers the live stream answers 503; the rest of the
// dashboard keeps answering.
func TestLiveSubscribersCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.MaxLiveSubscribers = 2 })
	srv := httptest.NewServer(b.handler)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	open := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for range 2 {
		resp := open()
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("subscriber within the cap: %d", resp.StatusCode)
		}
	}
	third := open()
	third.Body.Close()
	if third.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("subscriber past the cap: %d, want 503", third.StatusCode)
	}
	resp, err := http.Get(srv.URL + "/api/analyses")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("API while the stream is full: %d", resp.StatusCode)
	}
}

// A body trickled slower than the server allows is cut off.
func TestTrickledBodyCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.BodyGrace = 200 * time.Millisecond })
	srv := httptest.NewServer(b.handler)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 1000\r\n\r\n--x")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	if resp.StatusCode < 400 {
		t.Errorf("stalled body answered %d", resp.StatusCode)
	}
}
