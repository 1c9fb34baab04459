provider "aws" {
  region = var.region

  default_tags {
    tags = {
      Application = "docpipe"
    }
  }
}

module "docpipe" {
  source = "../../modules/docpipe"

  name       = var.name
  steps_zip  = var.steps_zip
  ingest_zip = var.ingest_zip
  relay_zip  = var.relay_zip

  log_retention_days = 14
}
