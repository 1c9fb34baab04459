package awslambda

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// lambdaAPI answers Invoke requests the way the Lambda service does: the
// function's payload as the body, X-Amz-Function-Error when it failed, and
// an error type header for service errors.
func lambdaAPI(t *testing.T, status int, header map[string]string, body string) Invoker {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if !strings.HasSuffix(r.URL.Path, "/functions/shout/invocations") {
			t.Errorf("request to %s", r.URL.Path)
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return Invoker{Client: lambda.New(lambda.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("id", "secret", ""),
		RetryMaxAttempts: 1,
	})}
}

func TestInvoke(t *testing.T) {
	t.Parallel()
	inv := lambdaAPI(t, http.StatusOK, nil, `{"ok": true}`)
	out, fnErr, err := inv.Invoke(t.Context(), "shout", []byte(`{}`))
	if err != nil || fnErr != "" || string(out) != `{"ok": true}` {
		t.Fatalf("Invoke = %s, %q, %v", out, fnErr, err)
	}

	inv = lambdaAPI(t, http.StatusOK, map[string]string{"X-Amz-Function-Error": "Unhandled"}, `{"errorType": "ValueError"}`)
	out, fnErr, err = inv.Invoke(t.Context(), "shout", []byte(`{}`))
	if err != nil || fnErr != "Unhandled" || string(out) != `{"errorType": "ValueError"}` {
		t.Fatalf("Invoke = %s, %q, %v", out, fnErr, err)
	}
}

func TestInvokeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
		want   string
	}{
		{http.StatusTooManyRequests, "TooManyRequestsException", steperr.NameTransient},
		{http.StatusInternalServerError, "ServiceException", steperr.NameTransient},
		{http.StatusBadGateway, "EC2ThrottledException", steperr.NameTransient},
		{http.StatusConflict, "ResourceConflictException", steperr.NameTransient},
		{http.StatusNotFound, "ResourceNotFoundException", steperr.NameUnexpected},
		{http.StatusBadRequest, "InvalidRequestContentException", steperr.NameUnexpected},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			inv := lambdaAPI(t, tc.status, map[string]string{"X-Amzn-Errortype": tc.code}, `{"message": "no"}`)
			_, _, err := inv.Invoke(t.Context(), "shout", []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), tc.code) {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if got := steperr.Name(err); got != tc.want {
				t.Errorf("%s is %s, want %s", tc.code, got, tc.want)
			}
		})
	}
}
