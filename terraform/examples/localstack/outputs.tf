output "table_name" {
  description = "DynamoDB table: export as DOCPIPE_TABLE for the CLI."
  value       = module.docpipe.table_name
}

output "bucket_name" {
  description = "S3 bucket: export as DOCPIPE_BUCKET; upload under incoming/ to start a workflow."
  value       = module.docpipe.bucket_name
}

output "state_machine_arn" {
  description = "State machine: export as DOCPIPE_STATE_MACHINE_ARN."
  value       = module.docpipe.state_machine_arn
}

output "steps_function_arn" {
  description = "ARN of the steps Lambda function."
  value       = module.docpipe.steps_function_arn
}

output "ingest_function_arn" {
  description = "ARN of the ingest Lambda function."
  value       = module.docpipe.ingest_function_arn
}
