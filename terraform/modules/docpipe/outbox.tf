################################################################################
# relay: delivers the outbox (EVENT# items written in the same transaction
# as the outcome they announce) to the webhook, the event bus and each
# project's own sinks. The table's stream wakes it for new events; a
# schedule sweeps what a lost record or a failed attempt left pending.
################################################################################

locals {
  relay_actions = {
    # Read the outbox and project sinks; move events to delivered,
    # retrying or dead (single-item updates, never a transaction).
    table = [
      "dynamodb:BatchGetItem",
      "dynamodb:GetItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]
    bus = [
      "events:PutEvents",
    ]
    # The webhook's signing secret, read once at start from the store
    # webhook_secret_arn names.
    secretsmanager = [
      "secretsmanager:GetSecretValue",
    ]
    ssm = [
      "ssm:GetParameter",
    ]
  }

  # "secretsmanager" or "ssm" (the store the secret's ARN names), and the
  # region it lives in; "" without a secret.
  webhook_secret_service = var.webhook_secret_arn == "" ? "" : split(":", var.webhook_secret_arn)[2]
  webhook_secret_region  = var.webhook_secret_arn == "" ? "" : split(":", var.webhook_secret_arn)[3]

  # The Lambda service reads the stream with the function's role for the
  # event source mapping; the code itself never calls these.
  relay_stream_actions = [
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
  ]

  event_bus_arn = "arn:${data.aws_partition.current.partition}:events:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:event-bus/${var.event_bus_name}"
}

resource "aws_iam_role" "relay" {
  name               = "${var.name}-relay"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json

  tags = var.tags
}

data "aws_iam_policy_document" "relay" {
  statement {
    sid       = "Table"
    actions   = local.relay_actions.table
    resources = local.table_resources
  }

  statement {
    sid       = "Stream"
    actions   = local.relay_stream_actions
    resources = [aws_dynamodb_table.this.stream_arn]
  }

  dynamic "statement" {
    for_each = var.event_bus_name == "" ? [] : [1]

    content {
      sid       = "PutEvents"
      actions   = local.relay_actions.bus
      resources = [local.event_bus_arn]
    }
  }

  # The one secret (or parameter) holding the webhook's signing secret.
  dynamic "statement" {
    for_each = local.webhook_secret_service == "secretsmanager" ? [1] : []

    content {
      sid       = "WebhookSecret"
      actions   = local.relay_actions.secretsmanager
      resources = [var.webhook_secret_arn]
    }
  }

  dynamic "statement" {
    for_each = local.webhook_secret_service == "ssm" ? [1] : []

    content {
      sid       = "WebhookSecretParameter"
      actions   = local.relay_actions.ssm
      resources = [var.webhook_secret_arn]
    }
  }

  # Its customer managed key, usable only through the store that holds it.
  dynamic "statement" {
    for_each = local.webhook_secret_service != "" && var.webhook_secret_kms_key_arn != null ? [1] : []

    content {
      sid       = "WebhookSecretKey"
      actions   = ["kms:Decrypt"]
      resources = [var.webhook_secret_kms_key_arn]

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["${local.webhook_secret_service}.${local.webhook_secret_region}.amazonaws.com"]
      }
    }
  }

  statement {
    sid       = "DeadLetter"
    actions   = local.dead_letter_actions
    resources = [aws_sqs_queue.dead_letter.arn]
  }

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.relay.arn}:*"]
  }

  dynamic "statement" {
    for_each = var.lambda_tracing_mode == "Active" ? [1] : []

    content {
      sid       = "XRay"
      actions   = local.lambda_xray_actions
      resources = ["*"]
    }
  }
}

resource "aws_iam_role_policy" "relay" {
  name   = "${var.name}-relay"
  role   = aws_iam_role.relay.id
  policy = data.aws_iam_policy_document.relay.json
}

resource "aws_cloudwatch_log_group" "relay" {
  #checkov:skip=CKV_AWS_338:Retention is log_retention_days (30 by default): logs name documents, so keeping them a year is the deployment's choice, not the module's.
  name              = "/aws/lambda/${var.name}-relay"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_lambda_function" "relay" {
  #checkov:skip=CKV_AWS_117:The function calls only public AWS APIs and the configured webhooks; a VPC would add a NAT gateway for no isolation gained.
  #checkov:skip=CKV_AWS_272:The zip is built by make package and uploaded by Terraform itself; code signing needs a Signer profile and signed artifacts in S3, a deployment choice outside the module.
  function_name = "${var.name}-relay"
  description   = "docpipe outcome events: delivers the outbox to webhooks and EventBridge"
  role          = aws_iam_role.relay.arn

  runtime       = "provided.al2023"
  architectures = ["arm64"]
  handler       = "bootstrap"

  filename         = var.relay_zip
  source_code_hash = filebase64sha256(var.relay_zip)

  memory_size                    = var.relay_memory_size
  timeout                        = var.relay_timeout
  reserved_concurrent_executions = var.relay_reserved_concurrency

  kms_key_arn = var.lambda_kms_key_arn

  # The signing secret is not here: the relay reads it from
  # webhook_secret_arn when it starts.
  environment {
    variables = {
      DOCPIPE_TABLE              = aws_dynamodb_table.this.name
      DOCPIPE_BUCKET             = aws_s3_bucket.this.id
      DOCPIPE_WEBHOOK_URL        = var.webhook_url
      DOCPIPE_WEBHOOK_SECRET_ARN = var.webhook_secret_arn
      DOCPIPE_EVENTBRIDGE_BUS    = var.event_bus_name
      # Webhooks reach only public addresses unless this is true.
      DOCPIPE_ALLOW_PRIVATE_NETWORK = tostring(var.webhook_allow_private_network)
    }
  }

  # The sweep schedule invokes it asynchronously (the stream mapping does
  # not): a sweep that keeps failing is kept for inspection.
  dead_letter_config {
    target_arn = aws_sqs_queue.dead_letter.arn
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.relay.name
  }

  tracing_config {
    mode = var.lambda_tracing_mode
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.relay, aws_cloudwatch_log_group.relay]
}

# Only records of outbox items still pending reach the function: delivered
# events (which leave the index) and every other item are filtered out by
# the service, free of charge.
resource "aws_lambda_event_source_mapping" "relay" {
  event_source_arn  = aws_dynamodb_table.this.stream_arn
  function_name     = aws_lambda_function.relay.arn
  starting_position = "LATEST"

  batch_size                         = 100
  maximum_batching_window_in_seconds = 1
  # A failing batch (a table error) is retried a few times, then skipped:
  # its events stay pending and the sweep delivers them.
  maximum_retry_attempts         = 3
  bisect_batch_on_function_error = true

  filter_criteria {
    filter {
      pattern = jsonencode({
        eventName = ["INSERT", "MODIFY"]
        dynamodb = {
          NewImage = {
            SK     = { S = [{ prefix = "EVENT#" }] }
            GSI1PK = { S = [{ prefix = "OUTBOX#PENDING#" }] }
          }
        }
      })
    }
  }

  depends_on = [aws_iam_role_policy.relay]
}

resource "aws_cloudwatch_event_rule" "relay_sweep" {
  name                = "${var.name}-relay-sweep"
  description         = "docpipe: deliver outbox events a stream record missed or whose retry is due"
  schedule_expression = var.relay_sweep_schedule_expression

  tags = var.tags
}

resource "aws_cloudwatch_event_target" "relay_sweep" {
  rule = aws_cloudwatch_event_rule.relay_sweep.name
  arn  = aws_lambda_function.relay.arn
}

resource "aws_lambda_permission" "relay_sweep" {
  statement_id  = "AllowRelaySweepSchedule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.relay.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.relay_sweep.arn
}
