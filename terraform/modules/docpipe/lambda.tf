################################################################################
# steps: the step handlers; the payload's "step" picks the handler
################################################################################

resource "aws_cloudwatch_log_group" "steps" {
  #checkov:skip=CKV_AWS_338:Retention is log_retention_days (30 by default): logs name documents, so keeping them a year is the deployment's choice, not the module's.
  name              = "/aws/lambda/${var.name}-steps"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_lambda_function" "steps" {
  #checkov:skip=CKV_AWS_116:The state machine invokes this function synchronously and handles its failures (Retry, Catch); a dead-letter queue serves asynchronous invocations only.
  #checkov:skip=CKV_AWS_117:The function calls only public AWS APIs (and the Lambda stages pipelines name); a VPC would add a NAT gateway or endpoints for no isolation gained.
  #checkov:skip=CKV_AWS_272:The zip is built by make package and uploaded by Terraform itself; code signing needs a Signer profile and signed artifacts in S3, a deployment choice outside the module.
  function_name = "${var.name}-steps"
  description   = "docpipe step handlers, invoked by the state machine"
  role          = aws_iam_role.steps.arn

  runtime       = "provided.al2023"
  architectures = ["arm64"]
  handler       = "bootstrap"

  filename         = var.steps_zip
  source_code_hash = filebase64sha256(var.steps_zip)

  memory_size                    = var.steps_memory_size
  timeout                        = var.steps_timeout
  reserved_concurrent_executions = var.steps_reserved_concurrency

  ephemeral_storage {
    size = var.steps_ephemeral_storage_size
  }

  kms_key_arn = var.lambda_kms_key_arn

  environment {
    variables = {
      DOCPIPE_TABLE       = aws_dynamodb_table.this.name
      DOCPIPE_BUCKET      = aws_s3_bucket.this.id
      DOCPIPE_PDF_BACKEND = var.pdf_backend
      DOCPIPE_TRANSCRIBE  = var.transcribe
      DOCPIPE_OCR         = var.ocr
    }
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.steps.name
  }

  tracing_config {
    mode = var.lambda_tracing_mode
  }

  tags = var.tags

  # The first invocation must find its permissions and log group in place.
  depends_on = [aws_iam_role_policy.steps, aws_cloudwatch_log_group.steps]
}

################################################################################
# ingest: uploads start workflows; execution status changes reconcile them
################################################################################

resource "aws_cloudwatch_log_group" "ingest" {
  #checkov:skip=CKV_AWS_338:Retention is log_retention_days (30 by default): logs name documents, so keeping them a year is the deployment's choice, not the module's.
  name              = "/aws/lambda/${var.name}-ingest"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_lambda_function" "ingest" {
  #checkov:skip=CKV_AWS_117:The function calls only public AWS APIs; a VPC would add a NAT gateway or endpoints for no isolation gained.
  #checkov:skip=CKV_AWS_272:The zip is built by make package and uploaded by Terraform itself; code signing needs a Signer profile and signed artifacts in S3, a deployment choice outside the module.
  function_name = "${var.name}-ingest"
  description   = "docpipe ingestion (S3 uploads) and execution reconciler"
  role          = aws_iam_role.ingest.arn

  runtime       = "provided.al2023"
  architectures = ["arm64"]
  handler       = "bootstrap"

  filename         = var.ingest_zip
  source_code_hash = filebase64sha256(var.ingest_zip)

  memory_size                    = var.ingest_memory_size
  timeout                        = var.ingest_timeout
  reserved_concurrent_executions = var.ingest_reserved_concurrency

  kms_key_arn = var.lambda_kms_key_arn

  lifecycle {
    precondition {
      # The project's documents are written under "<project>/": under the
      # uploads prefix, the bucket's event would take them for uploads.
      condition     = !startswith("${var.project}/", var.incoming_prefix) && !startswith(var.incoming_prefix, "${var.project}/")
      error_message = "incoming_prefix must not cover the project's own keys (\"<project>/\"): name the project or the prefix otherwise."
    }
  }

  environment {
    variables = {
      DOCPIPE_TABLE             = aws_dynamodb_table.this.name
      DOCPIPE_BUCKET            = aws_s3_bucket.this.id
      DOCPIPE_STATE_MACHINE_ARN = aws_sfn_state_machine.this.arn
      DOCPIPE_PROJECT           = var.project
      DOCPIPE_INCOMING_PREFIX   = var.incoming_prefix
    }
  }

  # EventBridge invokes it asynchronously: an event it still fails on after
  # Lambda's retries is kept for inspection instead of dropped.
  dead_letter_config {
    target_arn = aws_sqs_queue.dead_letter.arn
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.ingest.name
  }

  tracing_config {
    mode = var.lambda_tracing_mode
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.ingest, aws_cloudwatch_log_group.ingest]
}
