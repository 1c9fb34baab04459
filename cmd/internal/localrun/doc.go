// Package localrun is docpipe's runtime on one machine: it registers
// documents (staging their bytes, then committing their items), runs
// their workflows on one scheduler whose slots weigh each document by its
// size, admits every workflow into its project through
// pipeline.Admission, takes up what a state home left unfinished or
// parked on a decided review, serves a long-running process's uploads,
// and follows progress from the step items (showing it is the caller's).
// Imports go one way: cmd/docpipe (which parses flags, opens the table
// and blob drivers, builds the engine, and prints) and its dashboard
// wiring import localrun; localrun imports pipeline and its packages, and
// never a driver, an AWS client, the dashboard or cmd/docpipe.
package localrun
