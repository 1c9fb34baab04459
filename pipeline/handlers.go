package pipeline

// Handler names for stages that are not builtins: one generic handler per
// run kind serves every user stage of that kind, reading the stage's spec
// from the workflow's pipeline version.
const (
	HandlerCommand = "stage:command"
	HandlerHTTP    = "stage:http"
	HandlerLambda  = "stage:lambda"
	HandlerReview  = "stage:review"
)

// HandlerFor names the registered handler that runs st: its builtin, or
// the generic handler of its run kind.
func HandlerFor(st Stage) string {
	switch st.Run.Kind() {
	case RunCommand:
		return HandlerCommand
	case RunHTTP:
		return HandlerHTTP
	case RunLambda:
		return HandlerLambda
	case RunReview:
		return HandlerReview
	}
	if st.Run.Builtin != "" {
		return st.Run.Builtin
	}
	return st.Name
}
