################################################################################
# Uploads: S3 Object Created under the incoming prefix -> ingest
################################################################################

resource "aws_cloudwatch_event_rule" "upload" {
  name        = "${var.name}-upload"
  description = "docpipe: uploads under ${var.incoming_prefix} start workflows"

  event_pattern = jsonencode({
    source        = ["aws.s3"]
    "detail-type" = ["Object Created"]
    detail = {
      bucket = { name = [aws_s3_bucket.this.id] }
      object = { key = [{ prefix = var.incoming_prefix }] }
    }
  })

  tags = var.tags
}

resource "aws_cloudwatch_event_target" "upload" {
  rule = aws_cloudwatch_event_rule.upload.name
  arn  = aws_lambda_function.ingest.arn

  # Redelivery is safe: the workflow id is derived from bucket, key and
  # version, so a repeated event starts nothing new.
  retry_policy {
    maximum_retry_attempts       = var.event_maximum_retry_attempts
    maximum_event_age_in_seconds = var.event_maximum_age_seconds
  }

  # What EventBridge gives up on is kept, not dropped.
  dead_letter_config {
    arn = aws_sqs_queue.dead_letter.arn
  }
}

resource "aws_lambda_permission" "upload" {
  statement_id  = "AllowUploadRule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.ingest.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.upload.arn
}

################################################################################
# Reconciler: executions that ended outside the state machine's own error
# handling mark their workflows failed
################################################################################

resource "aws_cloudwatch_event_rule" "execution_failed" {
  name        = "${var.name}-execution-failed"
  description = "docpipe: failed, timed-out and aborted executions mark their workflows failed"

  event_pattern = jsonencode({
    source        = ["aws.states"]
    "detail-type" = ["Step Functions Execution Status Change"]
    detail = {
      status          = ["FAILED", "TIMED_OUT", "ABORTED"]
      stateMachineArn = [aws_sfn_state_machine.this.arn]
    }
  })

  tags = var.tags
}

resource "aws_cloudwatch_event_target" "execution_failed" {
  rule = aws_cloudwatch_event_rule.execution_failed.name
  arn  = aws_lambda_function.ingest.arn

  retry_policy {
    maximum_retry_attempts       = var.event_maximum_retry_attempts
    maximum_event_age_in_seconds = var.event_maximum_age_seconds
  }

  # What EventBridge gives up on is kept, not dropped.
  dead_letter_config {
    arn = aws_sqs_queue.dead_letter.arn
  }
}

resource "aws_lambda_permission" "execution_failed" {
  statement_id  = "AllowExecutionFailedRule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.ingest.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.execution_failed.arn
}

# A schedule catches what a lost status-change event would leave behind.
resource "aws_cloudwatch_event_rule" "reconcile" {
  count = var.reconcile_schedule_expression == null ? 0 : 1

  name                = "${var.name}-reconcile"
  description         = "docpipe: reconcile in-progress workflows with their executions"
  schedule_expression = var.reconcile_schedule_expression

  tags = var.tags
}

resource "aws_cloudwatch_event_target" "reconcile" {
  count = var.reconcile_schedule_expression == null ? 0 : 1

  rule = aws_cloudwatch_event_rule.reconcile[0].name
  arn  = aws_lambda_function.ingest.arn
}

resource "aws_lambda_permission" "reconcile" {
  count = var.reconcile_schedule_expression == null ? 0 : 1

  statement_id  = "AllowReconcileSchedule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.ingest.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.reconcile[0].arn
}
