# The same module against LocalStack: every service endpoint points at
# var.endpoint (DynamoDB at var.dynamodb_endpoint when set, for LocalStack
# in host mode with DynamoDB on moto), with LocalStack's dummy credentials.
# README.md says what host mode can and cannot apply.
provider "aws" {
  region     = var.region
  access_key = "test"
  secret_key = "test"

  s3_use_path_style           = true
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true

  endpoints {
    dynamodb = coalesce(var.dynamodb_endpoint, var.endpoint)
    events   = var.endpoint
    iam      = var.endpoint
    lambda   = var.endpoint
    logs     = var.endpoint
    s3       = var.endpoint
    sfn      = var.endpoint
    sqs      = var.endpoint
    sts      = var.endpoint
  }
}

module "docpipe" {
  #checkov:skip=CKV_AWS_28:A throwaway deployment on an emulator: point-in-time recovery is off so that it is created and destroyed quickly.
  source = "../../modules/docpipe"

  name       = var.name
  steps_zip  = var.steps_zip
  ingest_zip = var.ingest_zip
  relay_zip  = var.relay_zip

  # A throwaway deployment: destroy must always succeed.
  bucket_name                       = "${var.name}-local"
  bucket_force_destroy              = true
  point_in_time_recovery_enabled    = false
  table_deletion_protection_enabled = false
  reconcile_schedule_expression     = null
  log_retention_days                = 1
}
