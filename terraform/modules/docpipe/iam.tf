################################################################################
# What each function's code calls
#
# These are awsapi.IAMActions of the lists in cmd/internal/awsapi (the one
# list of AWS operations each binary makes, derived from its code by that
# package's test), split by the resource they apply to. terraform_test.go
# fails, naming the action, when they drift from the code.
################################################################################

locals {
  steps_actions = {
    table = [
      "dynamodb:BatchGetItem",
      "dynamodb:ConditionCheckItem",
      "dynamodb:DeleteItem",
      "dynamodb:GetItem",
      "dynamodb:PutItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]
    objects = [
      "s3:AbortMultipartUpload",
      "s3:DeleteObject",
      "s3:GetObject",
      "s3:PutObject",
    ]
    bucket = [
      "s3:ListBucket",
    ]
    # Granted only when var.transcribe = "aws".
    transcribe_start = [
      "transcribe:StartTranscriptionJob",
    ]
    transcribe_status = [
      "transcribe:GetTranscriptionJob",
    ]
    # Granted only when var.ocr = "textract".
    textract = [
      "textract:DetectDocumentText",
    ]
  }

  ingest_actions = {
    # TransactWriteItems is authorized item by item, which is why the
    # transaction's delete and condition-check actions are here.
    table = [
      "dynamodb:BatchGetItem",
      "dynamodb:ConditionCheckItem",
      "dynamodb:DeleteItem",
      "dynamodb:GetItem",
      "dynamodb:PutItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]
    # Ingest copies each upload to the document's own key (a later upload
    # to the same incoming key cannot change what a workflow processes)
    # and deletes the copy when the content was seen before.
    objects = [
      "s3:AbortMultipartUpload",
      "s3:DeleteObject",
      "s3:GetObject",
      "s3:PutObject",
    ]
    state_machine = [
      "states:StartExecution",
    ]
    executions = [
      "states:DescribeExecution",
    ]
  }

  # Item actions apply to the table; Query also to its indexes.
  table_resources = [
    aws_dynamodb_table.this.arn,
    "${aws_dynamodb_table.this.arn}/index/*",
  ]

  lambda_xray_actions = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
}

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

################################################################################
# steps function
################################################################################

resource "aws_iam_role" "steps" {
  name               = "${var.name}-steps"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json

  tags = var.tags
}

data "aws_iam_policy_document" "steps" {
  statement {
    sid       = "Table"
    actions   = local.steps_actions.table
    resources = local.table_resources
  }

  statement {
    sid       = "Objects"
    actions   = local.steps_actions.objects
    resources = ["${aws_s3_bucket.this.arn}/*"]
  }

  statement {
    sid       = "Bucket"
    actions   = local.steps_actions.bucket
    resources = [aws_s3_bucket.this.arn]
  }

  # Amazon Transcribe for audio. Its batch job actions support no
  # resource-level permissions, so a job may be started only with this
  # bucket as its output. Transcribe reads the document and writes its
  # transcript (under transcribe/) with this role's permissions, which the
  # Objects statement already grants.
  dynamic "statement" {
    for_each = var.transcribe == "aws" ? [1] : []

    content {
      sid       = "TranscribeStart"
      actions   = local.steps_actions.transcribe_start
      resources = ["*"]

      condition {
        test     = "StringEquals"
        variable = "transcribe:OutputBucketName"
        values   = [aws_s3_bucket.this.id]
      }
    }
  }

  # A separate statement: the output bucket condition key is absent from
  # GetTranscriptionJob's request context and would deny it.
  dynamic "statement" {
    for_each = var.transcribe == "aws" ? [1] : []

    content {
      sid       = "TranscribeStatus"
      actions   = local.steps_actions.transcribe_status
      resources = ["*"]
    }
  }

  # Amazon Textract reads rendered page images sent inline; its text
  # detection supports no resource-level permissions.
  dynamic "statement" {
    for_each = var.ocr == "textract" ? [1] : []

    content {
      sid       = "Textract"
      actions   = local.steps_actions.textract
      resources = ["*"]
    }
  }

  # The log group is created here, so the function needs no CreateLogGroup.
  # Users' Lambda stages: exactly the functions the pipeline files name.
  dynamic "statement" {
    for_each = length(local.pipeline_lambda_arns) > 0 ? [1] : []
    content {
      sid       = "InvokePipelineLambdaStages"
      actions   = ["lambda:InvokeFunction"]
      resources = local.pipeline_lambda_arns
    }
  }

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.steps.arn}:*"]
  }

  dynamic "statement" {
    for_each = var.lambda_tracing_mode == "Active" ? [1] : []

    content {
      sid     = "XRay"
      actions = local.lambda_xray_actions
      # X-Ray's write actions support no resource-level permissions.
      resources = ["*"]
    }
  }
}

resource "aws_iam_role_policy" "steps" {
  name   = "${var.name}-steps"
  role   = aws_iam_role.steps.id
  policy = data.aws_iam_policy_document.steps.json
}

################################################################################
# ingest function
################################################################################

resource "aws_iam_role" "ingest" {
  name               = "${var.name}-ingest"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json

  tags = var.tags
}

data "aws_iam_policy_document" "ingest" {
  statement {
    sid       = "Table"
    actions   = local.ingest_actions.table
    resources = local.table_resources
  }

  statement {
    sid       = "Objects"
    actions   = local.ingest_actions.objects
    resources = ["${aws_s3_bucket.this.arn}/*"]
  }

  statement {
    sid       = "StartExecution"
    actions   = local.ingest_actions.state_machine
    resources = [local.state_machine_arn, local.pipeline_state_machines_arn]
  }

  # The reconciler describes the executions it is told about or finds in
  # the table: only this state machine's and its pipeline versions'.
  statement {
    sid       = "DescribeExecution"
    actions   = local.ingest_actions.executions
    resources = ["${local.execution_arn_prefix}:*", "${local.pipeline_executions_arn}:*"]
  }

  statement {
    sid       = "DeadLetter"
    actions   = local.dead_letter_actions
    resources = [aws_sqs_queue.dead_letter.arn]
  }

  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.ingest.arn}:*"]
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

resource "aws_iam_role_policy" "ingest" {
  name   = "${var.name}-ingest"
  role   = aws_iam_role.ingest.id
  policy = data.aws_iam_policy_document.ingest.json
}

################################################################################
# state machine
################################################################################

data "aws_iam_policy_document" "state_machine_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
    }

    # Only this account's state machines may assume the role.
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_iam_role" "state_machine" {
  name               = "${var.name}-state-machine"
  assume_role_policy = data.aws_iam_policy_document.state_machine_assume.json

  tags = var.tags
}

data "aws_iam_policy_document" "state_machine" {
  # Every task is lambda:invoke of the unqualified steps function.
  statement {
    sid       = "InvokeSteps"
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.steps.arn]
  }

  # The Distributed Map's ItemReader reads the segment manifest the
  # segment_builder step wrote.
  statement {
    sid       = "ReadManifest"
    actions   = ["s3:GetObject"]
    resources = ["${aws_s3_bucket.this.arn}/*"]
  }

  # The Distributed Map runs its batches as child executions of this state
  # machine.
  statement {
    sid       = "StartChildExecutions"
    actions   = ["states:StartExecution"]
    resources = [local.state_machine_arn, local.pipeline_state_machines_arn]
  }

  statement {
    sid       = "ManageChildExecutions"
    actions   = ["states:DescribeExecution", "states:StopExecution"]
    resources = ["${local.execution_arn_prefix}/*", "${local.pipeline_executions_arn}/*"]
  }

  # Log delivery as Step Functions documents it: these actions support no
  # resource-level permissions.
  statement {
    sid = "LogDelivery"
    actions = [
      "logs:CreateLogDelivery",
      "logs:DeleteLogDelivery",
      "logs:DescribeLogGroups",
      "logs:DescribeResourcePolicies",
      "logs:GetLogDelivery",
      "logs:ListLogDeliveries",
      "logs:PutResourcePolicy",
      "logs:UpdateLogDelivery",
    ]
    resources = ["*"]
  }

  dynamic "statement" {
    for_each = var.state_machine_tracing_enabled ? [1] : []

    content {
      sid = "XRay"
      actions = [
        "xray:GetSamplingRules",
        "xray:GetSamplingTargets",
        "xray:PutTelemetryRecords",
        "xray:PutTraceSegments",
      ]
      resources = ["*"]
    }
  }
}

resource "aws_iam_role_policy" "state_machine" {
  name   = "${var.name}-state-machine"
  role   = aws_iam_role.state_machine.id
  policy = data.aws_iam_policy_document.state_machine.json
}
