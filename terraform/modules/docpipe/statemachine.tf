################################################################################
# State machine: the generated Lambda-mode definition
################################################################################

# Under /aws/vendedlogs/ so that Step Functions' log delivery does not grow
# the account's CloudWatch Logs resource policy with every state machine.
resource "aws_cloudwatch_log_group" "state_machine" {
  #checkov:skip=CKV_AWS_338:Retention is log_retention_days (30 by default): logs name documents, so keeping them a year is the deployment's choice, not the module's.
  name              = "/aws/vendedlogs/states/${local.state_machine_name}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

resource "aws_sfn_state_machine" "this" {
  #checkov:skip=CKV_AWS_285:Execution history is logged (state_machine_log_level, ERROR by default); its input and output can quote document content, so state_machine_include_execution_data adds them only when turned on.
  #checkov:skip=CKV_AWS_284:X-Ray tracing is the state_machine_tracing_enabled switch, off by default because X-Ray bills per trace.
  name     = local.state_machine_name
  type     = "STANDARD"
  role_arn = aws_iam_role.state_machine.arn

  # The definition's only placeholder is the steps function's ARN
  # (statemachine.VarStepsFunctionARN); terraform_test.go checks that these
  # variables are exactly the file's placeholders.
  definition = templatefile(local.definition_file, {
    steps_function_arn = aws_lambda_function.steps.arn
  })

  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.state_machine.arn}:*"
    include_execution_data = var.state_machine_include_execution_data
    level                  = var.state_machine_log_level
  }

  tracing_configuration {
    enabled = var.state_machine_tracing_enabled
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.state_machine]
}
