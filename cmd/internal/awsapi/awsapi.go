// Package awsapi is the one list of AWS API operations each binary calls,
// from which the IAM policies of the deployment are written: every function
// gets exactly the actions its code can reach. A test derives the
// operations from the code and fails when a list is missing one or names
// one no longer called.
package awsapi

import (
	"slices"
	"strings"
)

// Operations are "service:Operation" with the SDK's operation names.
var (
	// Steps is cmd/steps in Lambda mode: the step handlers on DynamoDB and
	// S3, Amazon Transcribe for audio when DOCPIPE_TRANSCRIBE=aws, Amazon
	// Textract for page images when DOCPIPE_OCR=textract, and the Lambda
	// functions users' pipelines name as stages.
	Steps = []string{
		"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:TransactWriteItems",
		"dynamodb:UpdateItem", "dynamodb:DeleteItem",
		"s3:AbortMultipartUpload", "s3:CompleteMultipartUpload", "s3:CreateMultipartUpload", "s3:DeleteObject",
		"s3:GetObject", "s3:HeadObject", "s3:ListObjectsV2", "s3:PutObject", "s3:UploadPart",
		"transcribe:GetTranscriptionJob", "transcribe:StartTranscriptionJob",
		"textract:DetectDocumentText",
		"lambda:Invoke",
	}
	// Worker is `steps worker`: the step handlers plus the activity API,
	// or the task queue of a queue-mode state machine.
	Worker = append(slices.Clone(Steps),
		"states:GetActivityTask", "states:SendTaskFailure", "states:SendTaskHeartbeat", "states:SendTaskSuccess",
		"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:ReceiveMessage")
	// Ingest is cmd/ingest: register (copy the upload to the document's
	// own key, drop the copy when the content is known), start, reconcile.
	Ingest = []string{
		"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:TransactWriteItems",
		"dynamodb:UpdateItem",
		"s3:AbortMultipartUpload", "s3:CompleteMultipartUpload", "s3:CreateMultipartUpload", "s3:DeleteObject",
		"s3:GetObject", "s3:HeadObject", "s3:PutObject", "s3:UploadPart",
		"states:DescribeExecution", "states:StartExecution",
	}
	// Relay is cmd/relay: read the outbox (and project sinks), move events
	// to delivered, retrying or dead, put them on an EventBridge bus; at
	// start, read the webhook's signing secret from Secrets Manager or
	// Parameter Store.
	Relay = []string{
		"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem",
		"events:PutEvents",
		"secretsmanager:GetSecretValue", "ssm:GetParameter",
	}
)

// iamActions maps operations whose IAM action has another name.
var iamActions = map[string][]string{
	"s3:HeadObject":              {"s3:GetObject"},
	"lambda:Invoke":              {"lambda:InvokeFunction"},
	"s3:ListObjectsV2":           {"s3:ListBucket"},
	"s3:CreateMultipartUpload":   {"s3:PutObject"},
	"s3:UploadPart":              {"s3:PutObject"},
	"s3:CompleteMultipartUpload": {"s3:PutObject"},
	// A transaction is authorized item by item.
	"dynamodb:TransactWriteItems": {"dynamodb:ConditionCheckItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
	"dynamodb:TransactGetItems":   {"dynamodb:GetItem"},
}

// IAMActions returns the sorted, distinct IAM actions that allow ops.
func IAMActions(ops []string) []string {
	var out []string
	for _, op := range ops {
		if a, ok := iamActions[op]; ok {
			out = append(out, a...)
			continue
		}
		out = append(out, op)
	}
	slices.SortFunc(out, strings.Compare)
	return slices.Compact(out)
}
