package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/docpipe/docpipe/internal/netguard"
	"github.com/docpipe/docpipe/internal/redact"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/childenv"

	"github.com/docpipe/docpipe/internal/childproc"
)

// Sink is one destination of events. Deliver returns nil only once the
// destination has accepted the event; any error means "try again later".
// body is the event's JSON, the same bytes on every attempt.
type Sink interface {
	Deliver(ctx context.Context, ev pipeline.Event, body []byte) error
	// String names the sink for logs, never showing a secret.
	String() string
}

// DefaultWebhookTimeout bounds one webhook request.
const DefaultWebhookTimeout = 10 * time.Second

// Webhook POSTs events signed as the Standard Webhooks specification says:
// webhook-id (the event id), webhook-timestamp (unix seconds) and
// webhook-signature ("v1,<base64 HMAC-SHA256 of id.timestamp.body>").
//
// It connects only to public addresses (see netguard) unless
// AllowPrivateNetwork is given, and never follows a redirect: a receiver
// could otherwise send the signed event to any address its own network
// reaches.
type Webhook struct {
	url          *url.URL
	signer       *standardwebhooks.Webhook // nil: unsigned
	timeout      time.Duration
	allowPrivate bool
	client       *http.Client
	now          func() time.Time
}

// WebhookOption configures a Webhook.
type WebhookOption func(*Webhook)

// WithTimeout bounds one request (DefaultWebhookTimeout otherwise).
func WithTimeout(d time.Duration) WebhookOption { return func(w *Webhook) { w.timeout = d } }

// AllowPrivateNetwork lets the webhook reach addresses that are not
// public: loopback, private, link-local (tests, intranets).
func AllowPrivateNetwork() WebhookOption { return func(w *Webhook) { w.allowPrivate = true } }

// WithWebhookClock injects the clock behind webhook-timestamp.
func WithWebhookClock(now func() time.Time) WebhookOption { return func(w *Webhook) { w.now = now } }

// NewWebhook returns a sink posting to rawURL. secret is "whsec_<base64>"
// (or bare base64); empty sends unsigned requests.
func NewWebhook(rawURL, secret string, opts ...WebhookOption) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("relay: webhook URL %q is not an http(s) URL", redact.URL(rawURL))
	}
	w := &Webhook{url: u, timeout: DefaultWebhookTimeout, now: time.Now}
	if secret != "" {
		if w.signer, err = standardwebhooks.NewWebhook(secret); err != nil {
			// The library's error may quote the secret.
			return nil, errors.New("relay: webhook secret is not whsec_<base64>")
		}
	}
	for _, o := range opts {
		o(w)
	}
	w.client = &http.Client{
		Timeout: w.timeout,
		Transport: &http.Transport{
			Proxy:               nil, // a proxy would dial on our behalf, past the address check
			DialContext:         netguard.Dialer(w.allowPrivate).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return w, nil
}

// String shows the URL without credentials; the secret never appears.
func (w *Webhook) String() string {
	signed := "unsigned"
	if w.signer != nil {
		signed = "signed"
	}
	return "webhook " + redact.URL(w.url.String()) + " (" + signed + ")"
}

// Deliver posts body; any 2xx status is success.
func (w *Webhook) Deliver(ctx context.Context, ev pipeline.Event, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := w.now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "docpipe")
	req.Header.Set(standardwebhooks.HeaderWebhookID, ev.ID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, fmt.Sprint(ts.Unix()))
	if w.signer != nil {
		sig, err := w.signer.Sign(ev.ID, ts, body)
		if err != nil {
			return fmt.Errorf("relay: sign event %s: %w", ev.ID, err)
		}
		req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		// url.Error quotes the URL, which may carry credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("POST %s: %w", redact.URL(w.url.String()), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		where := "no Location"
		if loc, err := resp.Location(); err == nil {
			where = "Location " + redact.URL(loc.String())
		}
		return fmt.Errorf("POST %s: %s, %s (redirects are not followed)", redact.URL(w.url.String()), resp.Status, where)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("POST %s: %s", redact.URL(w.url.String()), resp.Status)
	}
	return nil
}

// Command runs a shell command per event with the event JSON on stdin.
// Its environment is the minimal one of childenv (not docpipe's, which
// holds its credentials), the variables named in Env, and
// DOCPIPE_EVENT_ID / DOCPIPE_EVENT_TYPE. Exit status 0 is delivered;
// anything else is retried.
type Command struct {
	Line string   // passed to sh -c
	Env  []string // names of variables of docpipe's environment it gets
}

func (c Command) String() string { return "command " + c.Line }

// Deliver runs the command once.
func (c Command) Deliver(ctx context.Context, ev pipeline.Event, body []byte) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Line)
	childproc.Tie(cmd)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = childenv.Minimal(c.Env, "DOCPIPE_EVENT_ID="+ev.ID, "DOCPIPE_EVENT_TYPE="+string(ev.Type))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg != "" {
			return fmt.Errorf("%s: %w: %s", c, err, msg)
		}
		return fmt.Errorf("%s: %w", c, err)
	}
	return nil
}

// EventBridgeAPI is the part of the EventBridge client the sink calls.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridge puts each event on a bus: source "docpipe", detail-type the
// event type, detail the event JSON.
type EventBridge struct {
	Client EventBridgeAPI
	Bus    string // name or ARN; "" is the account's default bus
}

// EventSource is the source of every event docpipe puts on a bus.
const EventSource = "docpipe"

func (e EventBridge) String() string {
	if e.Bus == "" {
		return "eventbridge default bus"
	}
	return "eventbridge " + e.Bus
}

// Deliver puts one entry; an entry the service rejects is an error.
func (e EventBridge) Deliver(ctx context.Context, ev pipeline.Event, body []byte) error {
	entry := ebtypes.PutEventsRequestEntry{
		Source:     aws.String(EventSource),
		DetailType: aws.String(string(ev.Type)),
		Detail:     aws.String(string(body)),
		Time:       aws.Time(ev.Time),
	}
	if e.Bus != "" {
		entry.EventBusName = aws.String(e.Bus)
	}
	out, err := e.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
	if err != nil {
		return fmt.Errorf("%s: %w", e, err)
	}
	if out.FailedEntryCount > 0 && len(out.Entries) > 0 {
		r := out.Entries[0]
		return fmt.Errorf("%s: rejected: %s %s", e, aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage))
	}
	return nil
}

// StoredProjectSinks resolves a project's sinks from the table (see
// pipeline.ProjectSinks) for Relay.ProjectSinks. getenv reads the webhook
// secret from the variable the project names. A sink that cannot be built
// (its secret variable unset, say) fails each delivery with the reason, so
// the project's events retry and end up dead, visible to `docpipe events
// --failed`, while other projects' events flow. opts apply to every
// project webhook.
func StoredProjectSinks(repo *pipeline.Repository, getenv func(string) string, opts ...WebhookOption) func(context.Context, string) ([]Sink, error) {
	return func(ctx context.Context, projectID string) ([]Sink, error) {
		ps, err := repo.GetProjectSinks(ctx, projectID)
		if err != nil || ps.Empty() {
			return nil, err
		}
		name := "webhook of project " + projectID
		secret := ""
		if ps.WebhookSecretEnv != "" {
			if secret = getenv(ps.WebhookSecretEnv); secret == "" {
				return []Sink{brokenSink{name, fmt.Errorf("%s: environment variable %s (its secret) is not set", name, ps.WebhookSecretEnv)}}, nil
			}
		}
		w, err := NewWebhook(ps.WebhookURL, secret, opts...)
		if err != nil {
			return []Sink{brokenSink{name, fmt.Errorf("%s: %w", name, err)}}, nil
		}
		return []Sink{w}, nil
	}
}

// brokenSink is a configured sink that cannot deliver.
type brokenSink struct {
	name string
	err  error
}

func (b brokenSink) String() string { return b.name + " (misconfigured)" }

func (b brokenSink) Deliver(context.Context, pipeline.Event, []byte) error { return b.err }

// Config names the sinks configured outside the table (flags, environment):
// at most one webhook, one command and one EventBridge bus.
type Config struct {
	WebhookURL     string
	WebhookSecret  string
	Command        string
	CommandEnv     []string // variables the command gets besides the minimal set
	EventBridgeBus string
	// AllowPrivateNetwork lets webhooks reach addresses that are not
	// public; see AllowPrivateNetwork.
	AllowPrivateNetwork bool
}

// WebhookOptions are the options every webhook built from c takes,
// project webhooks included.
func (c Config) WebhookOptions() []WebhookOption {
	if c.AllowPrivateNetwork {
		return []WebhookOption{AllowPrivateNetwork()}
	}
	return nil
}

// ConfigError is a sink configuration the user must correct (a bad URL or
// secret), apart from faults met while connecting to a service.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Sinks builds the configured sinks in a fixed order; newEventBridge is
// called only when a bus is named. None configured is not an error.
func (c Config) Sinks(newEventBridge func() (EventBridgeAPI, error)) ([]Sink, error) {
	var sinks []Sink
	if c.WebhookURL != "" {
		w, err := NewWebhook(c.WebhookURL, c.WebhookSecret, c.WebhookOptions()...)
		if err != nil {
			return nil, &ConfigError{Err: err}
		}
		sinks = append(sinks, w)
	}
	for _, name := range c.CommandEnv {
		if !childenv.ValidName(name) {
			return nil, &ConfigError{Err: fmt.Errorf("relay: event command variable %q is not a variable name", name)}
		}
	}
	if c.Command != "" {
		sinks = append(sinks, Command{Line: c.Command, Env: c.CommandEnv})
	}
	if c.EventBridgeBus != "" {
		client, err := newEventBridge()
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, EventBridge{Client: client, Bus: c.EventBridgeBus})
	}
	return sinks, nil
}
