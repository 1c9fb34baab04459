package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

const (
	testSecret   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretARN    = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:docpipe/webhook-AbCdEf"
	parameterARN = "arn:aws:ssm:us-west-2:123456789012:parameter/docpipe/webhook"
)

// fakeStores answers from values (ARN → stored string) and records every
// call with the region it was sent to.
type fakeStores struct {
	values map[string]string
	binary bool
	err    error
	calls  []string // "secretsmanager <id> <region>" or "ssm <name> <region> decrypt=<bool>"
}

func (f *fakeStores) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	var o secretsmanager.Options
	for _, fn := range opts {
		fn(&o)
	}
	f.calls = append(f.calls, fmt.Sprintf("secretsmanager %s %s", aws.ToString(in.SecretId), o.Region))
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.values[aws.ToString(in.SecretId)]
	if !ok {
		return nil, errors.New("ResourceNotFoundException")
	}
	if f.binary {
		return &secretsmanager.GetSecretValueOutput{SecretBinary: []byte(v)}, nil
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(v)}, nil
}

func (f *fakeStores) GetParameter(_ context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	var o ssm.Options
	for _, fn := range opts {
		fn(&o)
	}
	f.calls = append(f.calls, fmt.Sprintf("ssm %s %s decrypt=%v", aws.ToString(in.Name), o.Region, aws.ToBool(in.WithDecryption)))
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.values[aws.ToString(in.Name)]
	if !ok {
		return nil, errors.New("ParameterNotFound")
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Value: aws.String(v)}}, nil
}

func (f *fakeStores) stores() secretStores {
	return secretStores{
		secretsManager: func() secretsManagerAPI { return f },
		parameterStore: func() parameterStoreAPI { return f },
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestWebhookSecretFromStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref, want string
	}{
		{secretARN, "secretsmanager " + secretARN + " eu-central-1"},
		// A SecureString parameter: decrypted by Parameter Store.
		{parameterARN, "ssm " + parameterARN + " us-west-2 decrypt=true"},
	} {
		f := &fakeStores{values: map[string]string{tc.ref: testSecret + "\n"}}
		got, err := webhookSecret(context.Background(), env(map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": tc.ref}), f.stores())
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if got != testSecret {
			t.Errorf("%s: secret %q, want %q (trimmed)", tc.ref, got, testSecret)
		}
		if len(f.calls) != 1 || f.calls[0] != tc.want {
			t.Errorf("%s: calls %q, want [%q]", tc.ref, f.calls, tc.want)
		}
	}
}

func TestWebhookSecretPlainForLocalRuns(t *testing.T) {
	t.Parallel()
	noStore := secretStores{
		secretsManager: func() secretsManagerAPI { t.Error("Secrets Manager client built"); return nil },
		parameterStore: func() parameterStoreAPI { t.Error("Parameter Store client built"); return nil },
	}
	for _, plain := range []string{"", testSecret} {
		got, err := webhookSecret(context.Background(), env(map[string]string{"DOCPIPE_WEBHOOK_SECRET": plain}), noStore)
		if err != nil || got != plain {
			t.Errorf("DOCPIPE_WEBHOOK_SECRET=%q: %q, %v", plain, got, err)
		}
	}
}

func TestWebhookSecretErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		env    map[string]string
		fake   fakeStores
		errHas string
	}{
		{"both set", map[string]string{"DOCPIPE_WEBHOOK_SECRET": testSecret, "DOCPIPE_WEBHOOK_SECRET_ARN": secretARN},
			fakeStores{values: map[string]string{secretARN: testSecret}}, "set one"},
		{"not an ARN", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": "docpipe/webhook"}, fakeStores{}, "not an ARN"},
		{"another service", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": "arn:aws:s3:::bucket/key"}, fakeStores{}, "neither"},
		{"missing", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": secretARN}, fakeStores{}, "ResourceNotFoundException"},
		{"denied", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": parameterARN}, fakeStores{err: errors.New("AccessDeniedException")}, "AccessDeniedException"},
		{"empty", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": parameterARN}, fakeStores{values: map[string]string{parameterARN: " \n"}}, "is empty"},
		{"binary", map[string]string{"DOCPIPE_WEBHOOK_SECRET_ARN": secretARN}, fakeStores{values: map[string]string{secretARN: testSecret}, binary: true}, "binary"},
	} {
		_, err := webhookSecret(context.Background(), env(tc.env), tc.fake.stores())
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.errHas)
			continue
		}
		if strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
	}
}

// The relay reads the secret once, when the function starts, and signs
// with it; invocations do not go back to the store.
func TestRelaySignsWithStoredSecretReadOnce(t *testing.T) {
	t.Parallel()
	f := &fakeStores{values: map[string]string{secretARN: testSecret}}
	cfg := aws.Config{Region: "eu-central-1"}
	h, err := newRelayHandler(context.Background(), cfg, env(map[string]string{
		"DOCPIPE_TABLE": "t", "DOCPIPE_WEBHOOK_URL": "https://hooks.example.com/x", "DOCPIPE_WEBHOOK_SECRET_ARN": secretARN,
	}), f.stores(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Relay.Sinks) != 1 || !strings.Contains(fmt.Sprint(h.Relay.Sinks[0]), "(signed)") {
		t.Errorf("sinks %v, want one signed webhook", h.Relay.Sinks)
	}
	if len(f.calls) != 1 {
		t.Errorf("%d store calls at start, want 1", len(f.calls))
	}

	// A stored value that is not a signing secret fails at start.
	bad := &fakeStores{values: map[string]string{secretARN: "not-a-secret"}}
	if _, err := newRelayHandler(context.Background(), cfg, env(map[string]string{
		"DOCPIPE_TABLE": "t", "DOCPIPE_WEBHOOK_URL": "https://hooks.example.com/x", "DOCPIPE_WEBHOOK_SECRET_ARN": secretARN,
	}), bad.stores(), nil); err == nil || strings.Contains(err.Error(), "not-a-secret") {
		t.Errorf("a stored non-whsec value: error %v, want one that does not quote it", err)
	}
}
