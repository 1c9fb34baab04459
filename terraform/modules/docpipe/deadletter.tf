################################################################################
# Dead letters: events that reached neither the ingest nor the relay
# function. EventBridge puts here what it could not deliver to ingest
# within its retry policy; Lambda puts here the asynchronous invocations of
# ingest and relay that still failed after its own retries.
################################################################################

locals {
  # Lambda sends a failed asynchronous event with the function's own role.
  dead_letter_actions = ["sqs:SendMessage"]
}

resource "aws_sqs_queue" "dead_letter" {
  name                      = "${var.name}-dead-letter"
  message_retention_seconds = var.dead_letter_message_retention_seconds
  sqs_managed_sse_enabled   = true

  tags = var.tags
}

# The upload and status-change rules may send what they could not deliver.
data "aws_iam_policy_document" "dead_letter" {
  statement {
    sid       = "EventBridgeRules"
    actions   = local.dead_letter_actions
    resources = [aws_sqs_queue.dead_letter.arn]

    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }

    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.upload.arn, aws_cloudwatch_event_rule.execution_failed.arn]
    }
  }
}

resource "aws_sqs_queue_policy" "dead_letter" {
  queue_url = aws_sqs_queue.dead_letter.id
  policy    = data.aws_iam_policy_document.dead_letter.json
}
