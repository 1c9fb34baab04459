package relay

import (
	"errors"
	"testing"
)

func TestConfigSinks(t *testing.T) {
	calls := 0
	newEB := func() (EventBridgeAPI, error) { calls++; return nil, nil }
	if sinks, err := (Config{}).Sinks(newEB); err != nil || len(sinks) != 0 || calls != 0 {
		t.Fatalf("empty config: %v, %v, %d EventBridge clients", sinks, err, calls)
	}
	sinks, err := Config{WebhookURL: "https://example.com/hook", Command: "cat", EventBridgeBus: "bus"}.Sinks(newEB)
	if err != nil || len(sinks) != 3 || calls != 1 {
		t.Fatalf("full config: %v, %v, %d EventBridge clients", sinks, err, calls)
	}
	if _, ok := sinks[0].(*Webhook); !ok {
		t.Errorf("first sink %T, want the webhook", sinks[0])
	}
	if c, ok := sinks[1].(Command); !ok || c.Line != "cat" {
		t.Errorf("second sink %#v, want the command", sinks[1])
	}
	if eb, ok := sinks[2].(EventBridge); !ok || eb.Bus != "bus" {
		t.Errorf("third sink %#v, want the bus", sinks[2])
	}
	var bad *ConfigError
	if _, err := (Config{WebhookURL: "ftp://example.com"}).Sinks(newEB); !errors.As(err, &bad) {
		t.Errorf("bad URL: %v, want a ConfigError", err)
	}
	boom := errors.New("no credentials")
	if _, err := (Config{EventBridgeBus: "bus"}).Sinks(func() (EventBridgeAPI, error) { return nil, boom }); !errors.Is(err, boom) || errors.As(err, &bad) {
		t.Errorf("client failure: %v, want it passed through, not a ConfigError", err)
	}
}
