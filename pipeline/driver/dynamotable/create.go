package dynamotable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/docpipe/docpipe/pipeline/table"
)

// CreateTable creates the single-table layout for development and tests
// (production tables come from Terraform, which must match this): string
// PK/SK, GSI1 and GSI2 on their own string keys, on-demand billing, a stream
// with old and new images, and TTL on the ttl attribute. An existing table
// of that name is accepted as is, so CreateTable is safe to repeat. It
// returns once the table is active.
func CreateTable(ctx context.Context, client *dynamodb.Client, name string, opts ...CreateOption) error {
	var c createConfig
	for _, o := range opts {
		o(&c)
	}
	attrs := []string{table.AttrPK, table.AttrSK, table.AttrGSI1PK, table.AttrGSI1SK, table.AttrGSI2PK, table.AttrGSI2SK}
	defs := make([]types.AttributeDefinition, len(attrs))
	for i, a := range attrs {
		defs[i] = types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS}
	}
	gsi := func(index, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName: aws.String(index),
			KeySchema: keySchema(pk, sk),
			// ALL: a status-index reader needs the step item's counters and
			// step map, and a second read per item would double the cost of
			// every listing; the items are small, so the extra storage is not.
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: defs,
		KeySchema:            keySchema(table.AttrPK, table.AttrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(table.IndexGSI1, table.AttrGSI1PK, table.AttrGSI1SK),
			gsi(table.IndexGSI2, table.AttrGSI2PK, table.AttrGSI2SK),
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if !c.noStream {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		}
	}
	_, err := client.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamotable: create table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 500 * time.Millisecond
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamotable: wait for table %s: %w", name, err)
	}
	return enableTTL(ctx, client, name)
}

// CreateOption adjusts CreateTable.
type CreateOption func(*createConfig)

type createConfig struct{ noStream bool }

// WithoutStream creates the table without its stream, for tests that never
// read it: moto keeps every stream record in the table and copies the
// whole table on each transaction, which makes long tests quadratic.
func WithoutStream() CreateOption { return func(c *createConfig) { c.noStream = true } }

// enableTTL turns on expiry of the ttl attribute unless it is already on.
// An emulator without the TTL API is tolerated: reads hide expired items
// themselves, so TTL only saves storage.
func enableTTL(ctx context.Context, client *dynamodb.Client, name string) error {
	desc, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if unsupported(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dynamotable: describe ttl of %s: %w", name, err)
	}
	if d := desc.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == table.AttrTTL &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(table.AttrTTL),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !unsupported(err) {
		return fmt.Errorf("dynamotable: enable ttl on %s: %w", name, err)
	}
	return nil
}

// unsupported recognises an emulator's answer to an API it lacks.
func unsupported(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode() {
	case "UnknownOperationException", "NotImplemented", "NotImplementedException", "InvalidAction":
		return true
	}
	return false
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
	}
}

// DeleteTable deletes a table, for tests and development; a missing table
// is not an error.
func DeleteTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	var missing *types.ResourceNotFoundException
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("dynamotable: delete table %s: %w", name, err)
	}
	return nil
}
