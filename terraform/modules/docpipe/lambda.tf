################################################################################
# steps: the step handlers; the payload's "step" picks the handler
################################################################################

resource "aws_cloudwatch_log_group" "steps" {
  name              = "/aws/lambda/${var.name}-steps"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_lambda_function" "steps" {
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
  name              = "/aws/lambda/${var.name}-ingest"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_lambda_function" "ingest" {
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

  environment {
    variables = {
      DOCPIPE_TABLE             = aws_dynamodb_table.this.name
      DOCPIPE_BUCKET            = aws_s3_bucket.this.id
      DOCPIPE_STATE_MACHINE_ARN = aws_sfn_state_machine.this.arn
      DOCPIPE_PROJECT           = var.project
      DOCPIPE_INCOMING_PREFIX   = var.incoming_prefix
    }
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
