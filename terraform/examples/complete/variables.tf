variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "eu-west-1"
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
