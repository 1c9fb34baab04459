package asl

// Error names Step Functions raises and Retry/Catch match. States.ALL and
// States.TaskFailed have special matching rules (see Retrier and Catcher).
const (
	ErrorAll                    = "States.ALL"
	ErrorTaskFailed             = "States.TaskFailed"
	ErrorTimeout                = "States.Timeout"
	ErrorHeartbeatTimeout       = "States.HeartbeatTimeout"
	ErrorRuntime                = "States.Runtime"
	ErrorBranchFailed           = "States.BranchFailed"
	ErrorNoChoiceMatched        = "States.NoChoiceMatched"
	ErrorIntrinsicFailure       = "States.IntrinsicFailure"
	ErrorItemReaderFailed       = "States.ItemReaderFailed"
	ErrorExceedToleratedFailure = "States.ExceedToleratedFailureThreshold"
	ErrorDataLimitExceeded      = "States.DataLimitExceeded"
)
