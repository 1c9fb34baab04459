// Package integration holds the end-to-end suite that runs docpipe against
// an AWS-compatible endpoint (AWS_ENDPOINT_URL: LocalStack on a developer
// machine, moto_server in CI). Its tests carry the `integration` build tag
// and speak only AWS APIs, so they run unchanged against either emulator.
package integration
