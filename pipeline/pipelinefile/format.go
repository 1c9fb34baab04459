package pipelinefile

import (
	"bytes"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/docpipe/docpipe/pipeline"
)

// The file's shape, for writing; reading walks the node tree instead so
// that it can report every problem at its line.
type (
	fileDef struct {
		Name           string      `yaml:"name"`
		Description    string      `yaml:"description,omitempty"`
		BatchSize      int         `yaml:"batch_size"`
		MaxConcurrency int         `yaml:"max_concurrency"`
		Stages         []fileStage `yaml:"stages"`
	}
	fileStage struct {
		Name    string         `yaml:"name"`
		Label   string         `yaml:"label,omitempty"`
		Scope   pipeline.Scope `yaml:"scope"`
		Needs   []string       `yaml:"needs,flow,omitempty"`
		Run     fileRun        `yaml:"run"`
		Timeout string         `yaml:"timeout"`
		Retry   fileRetry      `yaml:"retry"`
		When    *fileWhen      `yaml:"when,omitempty"`
		// Settings are written as stored; the encoder sorts their keys.
		Settings map[string]any `yaml:"settings,omitempty"`
		Env      []string       `yaml:"env,flow,omitempty"`
		// Cache is written only when it is off, as the file says it.
		Cache *bool `yaml:"cache,omitempty"`
	}
	fileWhen struct {
		Format   []string            `yaml:"format,flow,omitempty"`
		Language []string            `yaml:"language,flow,omitempty"`
		Pages    *pipeline.PageRange `yaml:"pages,omitempty"`
	}
	fileRun struct {
		Builtin string                `yaml:"builtin,omitempty"`
		Command []string              `yaml:"command,flow,omitempty"`
		Batch   bool                  `yaml:"batch,omitempty"`
		HTTP    string                `yaml:"http,omitempty"`
		Lambda  string                `yaml:"lambda,omitempty"`
		Review  *fileReview           `yaml:"review,omitempty"`
		Headers map[string]fileHeader `yaml:"headers,omitempty"`
		// A review's due date and outcomes.
		Due       string `yaml:"due,omitempty"`
		HardLimit string `yaml:"hard_limit,omitempty"`
		OnTimeout string `yaml:"on_timeout,omitempty"`
		OnReject  string `yaml:"on_reject,omitempty"`
	}
	fileHeader struct {
		Env string `yaml:"env"`
	}
	fileReview struct {
		Assign []string `yaml:"assign,flow,omitempty"`
		Group  string   `yaml:"group,omitempty"`
	}
	fileRetry struct {
		Attempts int     `yaml:"attempts"`
		Interval string  `yaml:"interval"`
		Backoff  float64 `yaml:"backoff"`
		MaxDelay string  `yaml:"max_delay"`
	}
)

// Format writes def as a pipeline file, every setting spelled out: Parse
// of the result gives def back. Files have no spelling for Retryable false;
// such a stage is written, and read back, as retryable.
func Format(def pipeline.Definition) []byte {
	f := fileDef{Name: def.Name, Description: def.Description, BatchSize: def.BatchSize, MaxConcurrency: def.MaxConcurrency}
	for _, st := range def.Stages {
		var when *fileWhen
		if w := st.When; w != nil {
			when = &fileWhen{Format: w.Format, Language: w.Language, Pages: w.Pages}
		}
		f.Stages = append(f.Stages, fileStage{
			Name: st.Name, Label: st.Label, Scope: st.Scope, Needs: st.Needs,
			Run:     formatRun(st.Run),
			Timeout: seconds(st.TimeoutSeconds),
			Retry: fileRetry{
				Attempts: st.Retry.MaxAttempts, Interval: seconds(st.Retry.IntervalSeconds),
				Backoff: st.Retry.BackoffRate, MaxDelay: seconds(st.Retry.MaxDelaySeconds),
			},
			When:     when,
			Settings: st.Settings,
			Env:      st.Env,
			Cache:    cacheField(st.NoCache),
		})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		panic("pipelinefile: encoding plain data: " + err.Error()) // cannot happen
	}
	return buf.Bytes()
}

func formatRun(r pipeline.RunSpec) fileRun {
	f := fileRun{Builtin: r.Builtin, Command: r.Command, Batch: r.Batch, HTTP: r.HTTP, Lambda: r.Lambda}
	if len(r.Headers) > 0 {
		f.Headers = map[string]fileHeader{}
		for name, h := range r.Headers {
			f.Headers[name] = fileHeader{Env: h.Env}
		}
	}
	if rv := r.Review; rv != nil {
		f.Review = &fileReview{Assign: rv.Assign, Group: rv.Group}
		f.Due, f.OnTimeout, f.OnReject = seconds(rv.DueSeconds), rv.OnTimeout, rv.OnReject
		if rv.HardLimitSeconds > 0 {
			f.HardLimit = seconds(rv.HardLimitSeconds)
		}
	}
	return f
}

func seconds(s int) string { return strconv.Itoa(s) + "s" }

// cacheField is how a file spells a stage's cache: only "cache: false".
func cacheField(noCache bool) *bool {
	if !noCache {
		return nil
	}
	off := false
	return &off
}
