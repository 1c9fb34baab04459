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

	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
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
	Config   aws.Config
	DynamoDB *dynamodb.Client
	S3       *s3.Client
	SFN      *sfn.Client
}

// NewAWSClients builds the clients from cfg. S3 uses path-style addressing
// when an endpoint override (LocalStack, moto) is configured.
func NewAWSClients(cfg aws.Config) AWSClients {
	return AWSClients{
		Config:   cfg,
		DynamoDB: dynamodb.NewFromConfig(cfg),
		S3:       s3.NewFromConfig(cfg, s3blob.PathStyleForEndpoint),
		SFN:      sfn.NewFromConfig(cfg),
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
