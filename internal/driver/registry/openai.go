package registry

import (
	"github.com/perflab/perflab/internal/driver"
	openaidriver "github.com/perflab/perflab/internal/driver/openai"
)

// openaiDriver decodes the params of an openai workload: chat,
// completions or embeddings requests, whole or streamed, to an
// OpenAI-compatible API. prompts_file and trace.file are relative to
// the plan.
func openaiDriver(in Input) (Spec, []error) {
	var cfg openaidriver.Config
	keys, errs := decodeConfig(in, &cfg)
	keys.resolve(&cfg.PromptsFile)
	if cfg.Trace != nil {
		keys.resolve(&cfg.Trace.File)
	}
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	return Spec{
		Target: cfg.Redacted(),
		Timed:  cfg.Trace != nil,
		New:    func() (driver.Driver, error) { return openaidriver.New(cfg) },
	}, nil
}
