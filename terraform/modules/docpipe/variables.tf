################################################################################
# General
################################################################################

variable "name" {
  description = "Name prefix of every resource (table, functions, state machine, roles, rules)."
  type        = string
  default     = "docpipe"

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,40}$", var.name))
    error_message = "name must be 1-40 letters, digits, '-' or '_' (it prefixes function and role names)."
  }
}

variable "tags" {
  description = "Tags added to every resource that supports them."
  type        = map(string)
  default     = {}
}

variable "project" {
  description = "Project that documents uploaded to the bucket join (DOCPIPE_PROJECT of the ingest function)."
  type        = string
  default     = "default"

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", var.project))
    error_message = "project must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit: it starts the key of every object the pipeline writes."
  }
}

variable "incoming_prefix" {
  description = "S3 key prefix of uploads to process (DOCPIPE_INCOMING_PREFIX); only Object Created events under it reach the ingest function."
  type        = string
  default     = "incoming/"

  validation {
    condition     = length(var.incoming_prefix) > 0
    error_message = "incoming_prefix must not be empty: the pipeline writes its own outputs to the same bucket, and those must not trigger ingestion."
  }
}

################################################################################
# DynamoDB table
################################################################################

variable "table_name" {
  description = "Name of the DynamoDB table; null uses var.name."
  type        = string
  default     = null
}

variable "table_kms_key_arn" {
  description = "Customer managed KMS key for the table's server-side encryption; null uses the AWS managed key (alias/aws/dynamodb). The key policy must allow use through DynamoDB (kms:ViaService) by the account's principals."
  type        = string
  default     = null
}

variable "point_in_time_recovery_enabled" {
  description = "Whether point-in-time recovery is enabled on the table."
  type        = bool
  default     = true
}

variable "table_deletion_protection_enabled" {
  description = "Whether the table is protected against deletion: terraform destroy (or a change that replaces the table) fails while it is on. Set false, apply, then destroy to remove a deployment on purpose."
  type        = bool
  default     = true
}

################################################################################
# S3 bucket
################################################################################

variable "bucket_name" {
  description = "Name of the S3 bucket; null lets S3 generate a unique name prefixed with var.name."
  type        = string
  default     = null
}

variable "bucket_force_destroy" {
  description = "Whether terraform destroy deletes the bucket even when it still holds objects."
  type        = bool
  default     = false
}

variable "abort_incomplete_multipart_upload_days" {
  description = "Days after which incomplete multipart uploads (large outputs written by the steps) are aborted."
  type        = number
  default     = 2
}

variable "noncurrent_version_expiration_days" {
  description = "Days after which noncurrent object versions (overwritten step outputs) expire."
  type        = number
  default     = 30
}

variable "incoming_expiration_days" {
  description = "Days after which uploads under incoming_prefix expire (ingestion copies each upload to its document's source key); null keeps them."
  type        = number
  default     = null
}

################################################################################
# Lambda functions
################################################################################

variable "steps_zip" {
  description = "Path of the steps function's zip (bootstrap built from ./cmd/steps by `make package`)."
  type        = string
}

variable "ingest_zip" {
  description = "Path of the ingest function's zip (bootstrap built from ./cmd/ingest by `make package`)."
  type        = string
}

variable "steps_memory_size" {
  description = "Memory of the steps function in MB (CPU grows with it; 1769 MB is one full vCPU)."
  type        = number
  default     = 2048
}

variable "steps_timeout" {
  description = "Timeout of the steps function in seconds; at least the longest TimeoutSeconds of a task in the state machine (900)."
  type        = number
  default     = 900

  validation {
    condition     = var.steps_timeout >= 1 && var.steps_timeout <= 900
    error_message = "steps_timeout must be between 1 and 900 seconds."
  }
}

variable "steps_ephemeral_storage_size" {
  description = "Size of the steps function's /tmp in MB, where sources are downloaded for extraction."
  type        = number
  default     = 2048
}

variable "steps_reserved_concurrency" {
  description = "Reserved concurrent executions of the steps function; -1 leaves it unreserved. Bounds the load the pipeline puts on DynamoDB and S3."
  type        = number
  default     = -1
}

variable "pdf_backend" {
  description = "PDF text extractor of the steps function (DOCPIPE_PDF_BACKEND): go, auto or poppler. The Lambda runtime has no pdftotext, so go is the default."
  type        = string
  default     = "go"

  validation {
    condition     = contains(["auto", "poppler", "go"], var.pdf_backend)
    error_message = "pdf_backend must be auto, poppler or go."
  }
}

variable "transcribe" {
  description = "Speech recognition of audio documents by the steps function (DOCPIPE_TRANSCRIBE): aws sends them to Amazon Transcribe, billed per second of audio; none leaves them to pocketsphinx, which the Lambda runtime lacks, so their spans are skipped with the reason."
  type        = string
  default     = "none"

  validation {
    condition     = contains(["aws", "none"], var.transcribe)
    error_message = "transcribe must be aws or none."
  }
}

variable "ocr" {
  description = "How the steps function reads scanned pages and images (DOCPIPE_OCR): textract sends each rendered page to Amazon Textract's DetectDocumentText, billed per page; tesseract runs on the function, whose Lambda runtime lacks it, so those pages are skipped with the reason."
  type        = string
  default     = "tesseract"

  validation {
    condition     = contains(["tesseract", "textract"], var.ocr)
    error_message = "ocr must be tesseract or textract."
  }
}

variable "ingest_memory_size" {
  description = "Memory of the ingest function in MB."
  type        = number
  default     = 256
}

variable "ingest_timeout" {
  description = "Timeout of the ingest function in seconds."
  type        = number
  default     = 60
}

variable "ingest_reserved_concurrency" {
  description = "Reserved concurrent executions of the ingest function; -1 leaves it unreserved."
  type        = number
  default     = -1
}

variable "lambda_tracing_mode" {
  description = "X-Ray tracing mode of the functions: PassThrough or Active (Active also grants the X-Ray write actions)."
  type        = string
  default     = "PassThrough"

  validation {
    condition     = contains(["PassThrough", "Active"], var.lambda_tracing_mode)
    error_message = "lambda_tracing_mode must be PassThrough or Active."
  }
}

variable "lambda_kms_key_arn" {
  description = "Customer managed KMS key encrypting the functions' environment variables at rest; null uses the Lambda service key. Whoever applies the module needs kms:CreateGrant and kms:Encrypt on it (Lambda decrypts through a grant). The variables hold names and ARNs, never secrets (see webhook_secret_arn)."
  type        = string
  default     = null
}

variable "log_retention_days" {
  description = "Retention in days of the functions' and the state machine's CloudWatch log groups: one of CloudWatch Logs' values (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653), or 0 to keep logs forever."
  type        = number
  default     = 30

  validation {
    condition     = contains([0, 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of CloudWatch Logs' retention values (or 0 to keep logs forever)."
  }
}

variable "dead_letter_message_retention_seconds" {
  description = "How long the dead-letter queue keeps an event that reached neither the ingest nor the relay function (EventBridge gave up delivering it, or the function failed on it after Lambda's asynchronous retries), in seconds: at most 1209600 (14 days)."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dead_letter_message_retention_seconds >= 60 && var.dead_letter_message_retention_seconds <= 1209600
    error_message = "dead_letter_message_retention_seconds must be between 60 and 1209600."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key encrypting the CloudWatch log groups; null uses CloudWatch Logs' default encryption."
  type        = string
  default     = null
}

################################################################################
# State machine
################################################################################

variable "definition_file" {
  description = "Path of the Lambda-mode ASL definition (generated by `make generate`); null uses statemachine/definitions/docpipe.lambda.asl.json of this repository, found relative to the module. Its only placeholder, $${steps_function_arn}, is filled with templatefile."
  type        = string
  default     = null
}

variable "state_machine_log_level" {
  description = "Step Functions logging level: ALL, ERROR, FATAL or OFF."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ALL", "ERROR", "FATAL", "OFF"], var.state_machine_log_level)
    error_message = "state_machine_log_level must be ALL, ERROR, FATAL or OFF."
  }
}

variable "state_machine_include_execution_data" {
  description = "Whether state machine logs include execution input and output: document ids, keys and error causes, which can quote document content. Off by default; turn it on while debugging a deployment."
  type        = bool
  default     = false
}

variable "state_machine_tracing_enabled" {
  description = "Whether X-Ray tracing is enabled on the state machine (also grants its X-Ray write actions). Off by default: X-Ray bills per recorded trace."
  type        = bool
  default     = false
}

variable "reconcile_schedule_expression" {
  description = "EventBridge schedule on which the ingest function reconciles every in-progress workflow with its execution (a safety net for missed status-change events); null disables it."
  type        = string
  default     = "rate(1 hour)"
}

variable "event_maximum_retry_attempts" {
  description = "How often EventBridge retries delivering an upload or status-change event to the ingest function."
  type        = number
  default     = 185
}

variable "event_maximum_age_seconds" {
  description = "How long EventBridge keeps retrying an undelivered event, in seconds."
  type        = number
  default     = 86400
}

variable "relay_zip" {
  description = "Path of the relay function's zip (bootstrap built from ./cmd/relay by `make package`)."
  type        = string
}

variable "relay_memory_size" {
  description = "Memory of the relay function in MB."
  type        = number
  default     = 256
}

variable "relay_reserved_concurrency" {
  description = "Reserved concurrent executions of the relay function; -1 leaves it unreserved."
  type        = number
  default     = -1
}

variable "relay_timeout" {
  description = "Timeout of the relay function in seconds: a sweep delivers the whole pending backlog, each webhook request taking up to 10 s."
  type        = number
  default     = 300
}

variable "relay_sweep_schedule_expression" {
  description = "EventBridge schedule on which the relay delivers every due pending event (lost stream records, retries after a failed attempt)."
  type        = string
  default     = "rate(5 minutes)"
}

variable "event_bus_name" {
  description = "EventBridge bus (name) the relay puts outcome events on; \"\" puts none."
  type        = string
  default     = ""
}

variable "webhook_url" {
  description = "URL the relay POSTs outcome events to (Standard Webhooks); \"\" sends none."
  type        = string
  default     = ""
  sensitive   = true
}

variable "webhook_allow_private_network" {
  description = "Let the relay's webhooks reach private, loopback and link-local addresses (a receiver inside the VPC). Off by default: webhooks reach only public addresses, never the Lambda runtime API or the instance metadata endpoint."
  type        = bool
  default     = false
}

variable "webhook_secret_arn" {
  description = "Full ARN of the Secrets Manager secret (its string value) or SSM Parameter Store SecureString parameter holding the webhook's signing secret (whsec_<base64>); \"\" sends unsigned requests. The relay reads it once when it starts; the secret is never in the function's configuration or in Terraform state, and the relay's role may read this one secret only."
  type        = string
  default     = ""

  validation {
    condition     = var.webhook_secret_arn == "" || can(regex("^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+-[A-Za-z0-9]{6}|ssm:[a-z0-9-]+:[0-9]{12}:parameter/.+)$", var.webhook_secret_arn))
    error_message = "webhook_secret_arn must be the full ARN of a Secrets Manager secret (ending in its 6-character suffix) or of an SSM parameter."
  }
}

variable "webhook_secret_kms_key_arn" {
  description = "Customer managed KMS key that encrypts the webhook secret, when it is not the store's AWS managed key: the relay may then decrypt with it, through Secrets Manager or Parameter Store only."
  type        = string
  default     = null
}

variable "pipeline_files" {
  description = "Your own pipeline files (YAML). The module reads them only to let the steps function invoke the Lambda functions their stages name; `docpipe pipeline apply --table T --state-machine ARN FILE` stores each version and deploys its state machine."
  type        = list(string)
  default     = []
}
