package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/transcribe"

	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/awstranscribe"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
	"github.com/docpipe/docpipe/pipeline/extract"
	dtranscribe "github.com/docpipe/docpipe/pipeline/transcribe"
)

// AWSOptions name the deployment's resources. AWS settings themselves
// (credentials, AWS_REGION, AWS_ENDPOINT_URL) come from the SDK's chain.
type AWSOptions struct {
	Table  string
	Bucket string
	// Counter, when set, counts every AWS request by operation (cost
	// accounting).
	Counter *awscount.Counter
}

// LoadAWSConfig loads the SDK configuration with docpipe's retry policy:
// throttling is waited out by the SDK's retryer rather than failing a step.
func LoadAWSConfig(ctx context.Context, counter *awscount.Counter) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryer(dynamotable.NewRetryer))
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if counter != nil {
		cfg.APIOptions = append(cfg.APIOptions, counter.AddTo)
	}
	return cfg, nil
}

// AWSClients are the service clients one binary uses.
type AWSClients struct {
	Config     aws.Config
	DynamoDB   *dynamodb.Client
	S3         *s3.Client
	SFN        *sfn.Client
	Transcribe *transcribe.Client
}

// NewAWSClients builds the clients from cfg. S3 uses path-style addressing
// when an endpoint override (LocalStack, moto) is configured.
func NewAWSClients(cfg aws.Config) AWSClients {
	return AWSClients{
		Config:     cfg,
		DynamoDB:   dynamodb.NewFromConfig(cfg),
		S3:         s3.NewFromConfig(cfg, s3blob.PathStyleForEndpoint),
		SFN:        sfn.NewFromConfig(cfg),
		Transcribe: transcribe.NewFromConfig(cfg),
	}
}

// OpenAWS opens DynamoDB and S3.
func OpenAWS(ctx context.Context, o AWSOptions) (*Backend, error) {
	cfg, err := LoadAWSConfig(ctx, o.Counter)
	if err != nil {
		return nil, err
	}
	return OpenAWSWith(NewAWSClients(cfg), o)
}

// OpenAWSWith opens DynamoDB and S3 through existing clients.
func OpenAWSWith(c AWSClients, o AWSOptions) (*Backend, error) {
	if o.Table == "" {
		return nil, errors.New("no DynamoDB table named (--table or " + EnvTable + ")")
	}
	if o.Bucket == "" {
		return nil, errors.New("no S3 bucket named (--bucket or " + EnvBucket + ")")
	}
	tbl := dynamotable.New(c.DynamoDB, o.Table)
	blobs, err := s3blob.New(c.S3, o.Bucket)
	if err != nil {
		return nil, err
	}
	return &Backend{Kind: "aws", Table: tbl, Blobs: blobs, Repo: newRepository(tbl), Bucket: o.Bucket}, nil
}

// Values of EnvTranscribe.
const (
	TranscribeAWS  = "aws"  // Amazon Transcribe
	TranscribeNone = "none" // no cloud service: pocketsphinx when installed
)

// AWSTranscriber chooses how step handlers on AWS turn audio into text,
// from setting (the value of EnvTranscribe): TranscribeAWS is Amazon
// Transcribe on the documents in b's bucket, which writes its transcripts
// to the same bucket under transcribe/; TranscribeNone or "" is
// pocketsphinx when this machine has it, and otherwise the spans are
// skipped with a reason that also names the Amazon Transcribe setting.
func AWSTranscriber(setting string, c AWSClients, b *Backend) (dtranscribe.Engine, error) {
	switch setting {
	case TranscribeAWS:
		if c.Transcribe == nil {
			return nil, errors.New("amazon transcribe: no client")
		}
		return &awstranscribe.Engine{Client: c.Transcribe, Bucket: b.Bucket, Blobs: b.Blobs}, nil
	case TranscribeNone, "":
		return suggestAWS{dtranscribe.NewPocketsphinx()}, nil
	}
	return nil, fmt.Errorf("%s=%q: want %s (Amazon Transcribe) or %s", EnvTranscribe, setting, TranscribeAWS, TranscribeNone)
}

// suggestAWS is a local engine on AWS: when it cannot run, its reason also
// says how to use Amazon Transcribe instead (a Lambda function has no
// pocketsphinx).
type suggestAWS struct{ dtranscribe.Engine }

func (s suggestAWS) Available(f extract.Format) (bool, string) {
	ok, reason := s.Engine.Available(f)
	if !ok {
		reason += "; or set " + EnvTranscribe + "=" + TranscribeAWS + " for Amazon Transcribe"
	}
	return ok, reason
}
