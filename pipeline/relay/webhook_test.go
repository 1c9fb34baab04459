package relay_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/internal/netguard"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/relay"
)

// A webhook answering with a redirect does not get the signed event sent
// on to where it points (a loopback admin port, a runtime API): the 3xx is
// a failed attempt that names the Location.
func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var internalHits atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { internalHits.Add(1) }))
	defer internal.Close()
	target := internal.URL + "/internal-admin"
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	w, err := relay.NewWebhook(redirector.URL, secret, relay.AllowPrivateNetwork())
	if err != nil {
		t.Fatal(err)
	}
	err = w.Deliver(t.Context(), pipeline.Event{ID: "evt_1"}, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "307") || !strings.Contains(err.Error(), target) {
		t.Errorf("Deliver = %v, want a failure naming 307 and %s", err, target)
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("the redirect target was reached %d times", n)
	}
}

// By default a webhook dials only public addresses, like the web fetcher.
func TestWebhookRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	strict, err := relay.NewWebhook(srv.URL, secret)
	if err != nil {
		t.Fatal(err)
	}
	err = strict.Deliver(t.Context(), pipeline.Event{ID: "evt_1"}, []byte(`{}`))
	var fa *netguard.ForbiddenAddressError
	if !errors.As(err, &fa) || fa.Kind != "loopback" {
		t.Errorf("Deliver to loopback = %v, want a forbidden address", err)
	}
	if hits.Load() != 0 {
		t.Error("the loopback server was reached")
	}
	sinks, err := relay.Config{WebhookURL: srv.URL, AllowPrivateNetwork: true}.Sinks(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sinks[0].Deliver(t.Context(), pipeline.Event{ID: "evt_1"}, []byte(`{}`)); err != nil || hits.Load() != 1 {
		t.Errorf("with private networks allowed: %v, %d hits", err, hits.Load())
	}
}
