variable "region" {
  description = "Region LocalStack emulates."
  type        = string
  default     = "us-east-1"
}

variable "endpoint" {
  description = "LocalStack's edge endpoint."
  type        = string
  default     = "http://localhost:4566"
}

variable "dynamodb_endpoint" {
  description = "DynamoDB's endpoint when it is not LocalStack's (moto beside LocalStack in host mode); null for var.endpoint."
  type        = string
  default     = null
}

variable "name" {
  description = "Name prefix of every resource."
  type        = string
  default     = "docpipe"
}

variable "steps_zip" {
  description = "Path of the steps function's zip, relative to this directory (`make package` writes it)."
  type        = string
  default     = "../../../bin/steps.zip"
}

variable "ingest_zip" {
  description = "Path of the ingest function's zip, relative to this directory (`make package` writes it)."
  type        = string
  default     = "../../../bin/ingest.zip"
}

variable "relay_zip" {
  description = "Path of the relay function's zip, relative to this directory (`make package` writes it)."
  type        = string
  default     = "../../../bin/relay.zip"
}
