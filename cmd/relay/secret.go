package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/docpipe/docpipe/cmd/internal/backend"
)

// secretsManagerAPI and parameterStoreAPI are the one call each store
// answers; tests pass fakes.
type secretsManagerAPI interface {
	GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

type parameterStoreAPI interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// secretStores builds the client of the store an ARN names, only when one
// is named.
type secretStores struct {
	secretsManager func() secretsManagerAPI
	parameterStore func() parameterStoreAPI
}

func awsSecretStores(cfg aws.Config) secretStores {
	return secretStores{
		secretsManager: func() secretsManagerAPI { return secretsmanager.NewFromConfig(cfg) },
		parameterStore: func() parameterStoreAPI { return ssm.NewFromConfig(cfg) },
	}
}

// webhookSecret returns the webhook's signing secret. On Lambda it is read
// once, at start, from the Secrets Manager secret or SSM parameter that
// DOCPIPE_WEBHOOK_SECRET_ARN names, so that it is neither in the function's
// configuration nor in Terraform state. DOCPIPE_WEBHOOK_SECRET (the secret
// itself) is for local runs, where no store is at hand; setting both is
// refused rather than guessing which one is meant.
func webhookSecret(ctx context.Context, getenv func(string) string, stores secretStores) (string, error) {
	plain, ref := getenv(backend.EnvWebhookSecret), getenv(backend.EnvWebhookSecretARN)
	switch {
	case ref == "":
		return plain, nil
	case plain != "":
		return "", fmt.Errorf("both %s and %s are set; set one", backend.EnvWebhookSecret, backend.EnvWebhookSecretARN)
	}
	secret, err := readSecret(ctx, ref, stores)
	if err != nil {
		return "", fmt.Errorf("%s: %w", backend.EnvWebhookSecretARN, err)
	}
	return secret, nil
}

// readSecret fetches the string an ARN names, from the store and region
// the ARN says. The value is trimmed: a secret written from a file often
// ends in a newline, and no whsec_ secret has surrounding space.
func readSecret(ctx context.Context, ref string, stores secretStores) (string, error) {
	a, err := arn.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("%q is not an ARN: %w", ref, err)
	}
	var value *string
	switch {
	case a.Service == "secretsmanager" && strings.HasPrefix(a.Resource, "secret:"):
		out, err := stores.secretsManager().GetSecretValue(ctx,
			&secretsmanager.GetSecretValueInput{SecretId: aws.String(ref)},
			func(o *secretsmanager.Options) { o.Region = a.Region })
		if err != nil {
			return "", fmt.Errorf("read secret %s: %w", ref, err)
		}
		if out.SecretString == nil && out.SecretBinary != nil {
			return "", fmt.Errorf("secret %s is binary; store the signing secret as a string", ref)
		}
		value = out.SecretString
	case a.Service == "ssm" && strings.HasPrefix(a.Resource, "parameter/"):
		out, err := stores.parameterStore().GetParameter(ctx,
			&ssm.GetParameterInput{Name: aws.String(ref), WithDecryption: aws.Bool(true)},
			func(o *ssm.Options) { o.Region = a.Region })
		if err != nil {
			return "", fmt.Errorf("read parameter %s: %w", ref, err)
		}
		if out.Parameter != nil {
			value = out.Parameter.Value
		}
	default:
		return "", fmt.Errorf("%s names neither a Secrets Manager secret nor an SSM parameter", ref)
	}
	secret := strings.TrimSpace(aws.ToString(value))
	if secret == "" {
		return "", errors.New(ref + " is empty")
	}
	return secret, nil
}
