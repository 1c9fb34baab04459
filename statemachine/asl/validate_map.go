package asl

func (v *validator) mapState(where string, m *Machine, s *Map) {
	v.flow(where, m, s.Flow)
	v.io(where, s.IO)
	v.template(join(where, "ResultSelector"), s.ResultSelector)
	v.resultPath(join(where, "ResultPath"), s.ResultPath)
	v.retryCatch(where, m, s.Retry, s.Catch)
	if s.ItemSelector != nil && s.Parameters != nil {
		v.add(where, "has both ItemSelector and Parameters")
	}
	v.template(join(where, "ItemSelector"), s.ItemSelector)
	v.template(join(where, "Parameters"), s.Parameters)
	v.optPath(join(where, "ItemsPath"), s.ItemsPath)
	switch {
	case s.ItemProcessor != nil && s.Iterator != nil:
		v.add(where, "has both ItemProcessor and Iterator")
	case s.ItemProcessor == nil && s.Iterator == nil:
		v.add(where, "needs ItemProcessor (or Iterator)")
	case s.ItemProcessor != nil:
		v.machine(join(where, "ItemProcessor"), &s.ItemProcessor.Machine)
	default:
		v.machine(join(where, "Iterator"), s.Iterator)
	}
	distributed := v.processorConfig(where, s)
	if s.MaxConcurrency != nil && *s.MaxConcurrency < 0 {
		v.add(join(where, "MaxConcurrency"), "must be ≥ 0, got %d", *s.MaxConcurrency)
	}
	if s.MaxConcurrency != nil && s.MaxConcurrencyPath != nil {
		v.add(where, "has both MaxConcurrency and MaxConcurrencyPath")
	}
	v.optPath(join(where, "MaxConcurrencyPath"), s.MaxConcurrencyPath)
	if s.ToleratedFailurePercentage != nil && (*s.ToleratedFailurePercentage < 0 || *s.ToleratedFailurePercentage > 100) {
		v.add(join(where, "ToleratedFailurePercentage"), "must be between 0 and 100, got %g", *s.ToleratedFailurePercentage)
	}
	if s.ToleratedFailureCount != nil && *s.ToleratedFailureCount < 0 {
		v.add(join(where, "ToleratedFailureCount"), "must be ≥ 0, got %d", *s.ToleratedFailureCount)
	}
	v.optPath(join(where, "ToleratedFailurePercentagePath"), s.ToleratedFailurePercentagePath)
	v.optPath(join(where, "ToleratedFailureCountPath"), s.ToleratedFailureCountPath)
	if len(s.Label) > 40 {
		v.add(join(where, "Label"), "must be at most 40 characters")
	}
	if !distributed {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"ItemReader", s.ItemReader != nil},
			{"ResultWriter", s.ResultWriter != nil},
			{"ToleratedFailurePercentage", s.ToleratedFailurePercentage != nil},
			{"ToleratedFailurePercentagePath", s.ToleratedFailurePercentagePath != nil},
			{"ToleratedFailureCount", s.ToleratedFailureCount != nil},
			{"ToleratedFailureCountPath", s.ToleratedFailureCountPath != nil},
			{"Label", s.Label != ""},
		} {
			if f.set {
				v.add(join(where, f.name), "is only allowed in DISTRIBUTED mode")
			}
		}
	}
	if s.ItemReader != nil {
		v.itemReader(join(where, "ItemReader"), s.ItemReader)
	}
}

// processorConfig checks Mode and ExecutionType and reports whether the
// Map runs in DISTRIBUTED mode.
func (v *validator) processorConfig(where string, s *Map) (distributed bool) {
	if s.ItemProcessor == nil || s.ItemProcessor.ProcessorConfig == nil {
		return false
	}
	pc := s.ItemProcessor.ProcessorConfig
	switch pc.Mode {
	case "", ModeInline:
	case ModeDistributed:
		distributed = true
	default:
		v.add(join(where, "ItemProcessor.ProcessorConfig.Mode"), "must be INLINE or DISTRIBUTED, got %q", pc.Mode)
	}
	if et := pc.ExecutionType; et != "" && et != ExecutionStandard && et != ExecutionExpress {
		v.add(join(where, "ItemProcessor.ProcessorConfig.ExecutionType"), "must be STANDARD or EXPRESS, got %q", et)
	}
	if et := pc.ExecutionType; et != "" && !distributed {
		v.add(join(where, "ItemProcessor.ProcessorConfig.ExecutionType"), "is only allowed in DISTRIBUTED mode")
	}
	return distributed
}

func (v *validator) itemReader(where string, r *ItemReader) {
	if r.Resource != ResourceS3GetObject {
		v.add(join(where, "Resource"), "only %s is supported, got %q", ResourceS3GetObject, r.Resource)
	}
	if c := r.ReaderConfig; c != nil {
		if c.InputType != "" && c.InputType != ReaderInputTypeJSON {
			v.add(join(where, "ReaderConfig.InputType"), "only JSON is supported, got %q", c.InputType)
		}
		if c.MaxItems != nil && *c.MaxItems < 0 {
			v.add(join(where, "ReaderConfig.MaxItems"), "must be ≥ 0, got %d", *c.MaxItems)
		}
		v.optPath(join(where, "ReaderConfig.MaxItemsPath"), c.MaxItemsPath)
	}
	v.template(join(where, "Parameters"), r.Parameters)
	if r.Parameters == nil || r.Parameters.Kind != TemplateObject {
		v.add(join(where, "Parameters"), "must be an object with Bucket and Key")
		return
	}
	for _, k := range []string{"Bucket", "Key"} {
		if r.Parameters.Field(k) == nil && r.Parameters.Field(k+".$") == nil {
			v.add(join(where, "Parameters"), "needs %s (or %s.$)", k, k)
		}
	}
}
