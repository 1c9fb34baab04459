data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  table_name         = coalesce(var.table_name, var.name)
  state_machine_name = var.name
  definition_file    = coalesce(var.definition_file, "${path.module}/../../../statemachine/definitions/docpipe.lambda.asl.json")

  # The state machine's ARN is built from its name rather than read from the
  # resource: its own role must name it (Distributed Map child executions),
  # and the role exists before the state machine.
  state_machine_arn = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:stateMachine:${local.state_machine_name}"
  # Executions are execution:<state machine>:<name>; Distributed Map child
  # executions are execution:<state machine>/<map run>:<name>.
  execution_arn_prefix = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:execution:${local.state_machine_name}"

  # Users' pipeline versions run in state machines named
  # <state machine>-<pipeline>-v<version> (docpipe pipeline apply), which
  # the grants of the deployment's own machine cover by this prefix.
  pipeline_state_machines_arn = "${local.state_machine_arn}-*"
  pipeline_executions_arn     = "${local.execution_arn_prefix}-*"

  # The Lambda functions users' pipelines name as stages: the only functions
  # the steps function may invoke.
  pipeline_lambda_arns = sort(distinct(flatten([
    for f in var.pipeline_files : [
      for st in yamldecode(file(f)).stages : st.run.lambda if can(st.run.lambda)
    ]
  ])))
}

################################################################################
# DynamoDB: the single table (pipeline/table), matching dynamotable.CreateTable
################################################################################

resource "aws_dynamodb_table" "this" {
  name                        = local.table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "PK"
  range_key                   = "SK"
  deletion_protection_enabled = var.table_deletion_protection_enabled

  stream_enabled   = true
  stream_view_type = "NEW_AND_OLD_IMAGES"

  attribute {
    name = "PK"
    type = "S"
  }
  attribute {
    name = "SK"
    type = "S"
  }
  attribute {
    name = "GSI1PK"
    type = "S"
  }
  attribute {
    name = "GSI1SK"
    type = "S"
  }
  attribute {
    name = "GSI2PK"
    type = "S"
  }
  attribute {
    name = "GSI2SK"
    type = "S"
  }

  # Projection ALL on both indexes, as in dynamotable.CreateTable: the
  # status-index (GSI1) readers need the step item's counters and step map,
  # and the content index (GSI2) readers the whole document item; projecting
  # keys only would cost a second read per listed item, while the items are
  # small enough that the extra storage is not.
  global_secondary_index {
    name            = "GSI1"
    hash_key        = "GSI1PK"
    range_key       = "GSI1SK"
    projection_type = "ALL"
  }

  global_secondary_index {
    name            = "GSI2"
    hash_key        = "GSI2PK"
    range_key       = "GSI2SK"
    projection_type = "ALL"
  }

  ttl {
    attribute_name = "ttl"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.table_kms_key_arn
  }

  tags = var.tags
}

################################################################################
# S3: uploads, sources and every step's outputs
################################################################################

resource "aws_s3_bucket" "this" {
  #checkov:skip=CKV_AWS_18:Server access logs need a second bucket to receive them; CloudTrail data events, an account-wide choice, record object access instead.
  #checkov:skip=CKV_AWS_144:The bucket holds uploads and outputs derived from them, recoverable by rerunning; cross-region replication is a disaster-recovery choice outside the module.
  #checkov:skip=CKV_AWS_145:SSE-S3 lets the functions and the state machine's ItemReader read and write without KMS permissions; objects are encrypted at rest either way.
  bucket        = var.bucket_name
  bucket_prefix = var.bucket_name == null ? "${var.name}-" : null
  force_destroy = var.bucket_force_destroy

  tags = var.tags
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket = aws_s3_bucket.this.id

  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  # SSE-S3: the functions and the state machine's ItemReader read and write
  # without any KMS permission.
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

data "aws_iam_policy_document" "bucket" {
  # A deny narrows and never grants, so the wildcard here is the one place a
  # "service:*" action is allowed (terraform_test.go checks that).
  statement {
    sid     = "DenyInsecureTransport"
    effect  = "Deny"
    actions = ["s3:*"]
    resources = [
      aws_s3_bucket.this.arn,
      "${aws_s3_bucket.this.arn}/*",
    ]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = data.aws_iam_policy_document.bucket.json

  depends_on = [aws_s3_bucket_public_access_block.this]
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  #checkov:skip=CKV_AWS_300:The transient rule below aborts incomplete multipart uploads bucket-wide; checkov drops static rules when a dynamic rule sits beside them (terraform_test.go checks this rule instead).
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "transient"
    status = "Enabled"

    filter {}

    abort_incomplete_multipart_upload {
      days_after_initiation = var.abort_incomplete_multipart_upload_days
    }

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_expiration_days
    }
  }

  dynamic "rule" {
    for_each = var.incoming_expiration_days == null ? [] : [var.incoming_expiration_days]

    content {
      id     = "incoming"
      status = "Enabled"

      filter {
        prefix = var.incoming_prefix
      }

      expiration {
        days = rule.value
      }
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

# Object Created events go to EventBridge, where a rule filters them on the
# incoming prefix (see events.tf).
resource "aws_s3_bucket_notification" "this" {
  bucket      = aws_s3_bucket.this.id
  eventbridge = true
}
