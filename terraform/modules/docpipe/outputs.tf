output "table_name" {
  description = "Name of the DynamoDB table (DOCPIPE_TABLE)."
  value       = aws_dynamodb_table.this.name
}

output "table_arn" {
  description = "ARN of the DynamoDB table."
  value       = aws_dynamodb_table.this.arn
}

output "table_stream_arn" {
  description = "ARN of the table's stream (new and old images)."
  value       = aws_dynamodb_table.this.stream_arn
}

output "bucket_name" {
  description = "Name of the S3 bucket (DOCPIPE_BUCKET)."
  value       = aws_s3_bucket.this.id
}

output "bucket_arn" {
  description = "ARN of the S3 bucket."
  value       = aws_s3_bucket.this.arn
}

output "state_machine_name" {
  description = "Name of the state machine."
  value       = aws_sfn_state_machine.this.name
}

output "state_machine_arn" {
  description = "ARN of the state machine (DOCPIPE_STATE_MACHINE_ARN)."
  value       = aws_sfn_state_machine.this.arn
}

output "state_machine_role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = aws_iam_role.state_machine.arn
}

output "state_machine_log_group_name" {
  description = "CloudWatch log group of the state machine."
  value       = aws_cloudwatch_log_group.state_machine.name
}

output "steps_function_name" {
  description = "Name of the steps Lambda function."
  value       = aws_lambda_function.steps.function_name
}

output "steps_function_arn" {
  description = "ARN of the steps Lambda function."
  value       = aws_lambda_function.steps.arn
}

output "steps_role_arn" {
  description = "ARN of the steps function's IAM role."
  value       = aws_iam_role.steps.arn
}

output "ingest_function_name" {
  description = "Name of the ingest Lambda function."
  value       = aws_lambda_function.ingest.function_name
}

output "ingest_function_arn" {
  description = "ARN of the ingest Lambda function."
  value       = aws_lambda_function.ingest.arn
}

output "ingest_role_arn" {
  description = "ARN of the ingest function's IAM role."
  value       = aws_iam_role.ingest.arn
}

output "upload_rule_arn" {
  description = "ARN of the EventBridge rule sending uploads to the ingest function."
  value       = aws_cloudwatch_event_rule.upload.arn
}

output "execution_failed_rule_arn" {
  description = "ARN of the EventBridge rule sending failed executions to the ingest function."
  value       = aws_cloudwatch_event_rule.execution_failed.arn
}

output "relay_function_name" {
  description = "Name of the relay Lambda function (outcome events)."
  value       = aws_lambda_function.relay.function_name
}

output "relay_function_arn" {
  description = "ARN of the relay Lambda function (outcome events)."
  value       = aws_lambda_function.relay.arn
}

output "dead_letter_queue_name" {
  description = "Name of the SQS queue keeping events that reached neither the ingest nor the relay function."
  value       = aws_sqs_queue.dead_letter.name
}

output "dead_letter_queue_arn" {
  description = "ARN of the SQS queue keeping events that reached neither the ingest nor the relay function."
  value       = aws_sqs_queue.dead_letter.arn
}
