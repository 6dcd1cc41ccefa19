package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Job is what the hub sends: the archive's bytes (base64 in JSON) and how to render them.
type Job struct {
	Kind         string         `json:"kind"`
	Archive      []byte         `json:"archive"`
	Path         string         `json:"path"`
	Values       map[string]any `json:"values"`
	Release      Release        `json:"release"`
	Capabilities *Capabilities  `json:"capabilities"`
	Limits       Limits         `json:"limits"`
}

type Release struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Capabilities are what the target cluster's agent reports: Helm's .Capabilities.KubeVersion and
// .Capabilities.APIVersions. Without them Helm's defaults apply, as in `helm template`.
type Capabilities struct {
	KubeVersion string   `json:"kubeVersion"`
	APIVersions []string `json:"apiVersions"`
}

// Limits a job may not exceed; zero means the default.
type Limits struct {
	OutputBytes  int64 `json:"outputBytes"`
	ArchiveBytes int64 `json:"archiveBytes"`
	Files        int   `json:"files"`
	FileBytes    int64 `json:"fileBytes"`
	TotalBytes   int64 `json:"totalBytes"`
	HeapBytes    int64 `json:"heapBytes"`
}

func (l Limits) withDefaults() Limits {
	def := func(v, d int64) int64 {
		if v <= 0 {
			return d
		}
		return v
	}
	l.OutputBytes = def(l.OutputBytes, 8<<20)
	l.ArchiveBytes = def(l.ArchiveBytes, 10<<20)
	l.Files = int(def(int64(l.Files), 5000))
	// Helm's own per-file and whole-chart limits (archive.MaxDecompressedFileSize and
	// MaxDecompressedChartSize) are 5 MiB and 100 MiB; a tenant gets less of the whole.
	l.FileBytes = def(l.FileBytes, 5<<20)
	l.TotalBytes = def(l.TotalBytes, 50<<20)
	l.HeapBytes = def(l.HeapBytes, 384<<20)
	return l
}

const (
	reasonInvalid     = "invalid"
	reasonLimit       = "limit"
	reasonUnsupported = "unsupported"
)

// Result is the one line written to stdout.
type Result struct {
	OK     bool   `json:"ok"`
	YAML   string `json:"yaml,omitempty"`
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func success(yaml string) Result { return Result{OK: true, YAML: yaml} }

// maxErrorBytes keeps an error readable: a template recursing a thousand levels deep makes Go's
// text/template repeat the whole chain in its message. The cause is at the end; so is the place.
const maxErrorBytes = 4096

func failure(reason, message string) Result {
	if len(message) > maxErrorBytes {
		message = message[:maxErrorBytes/2] + fmt.Sprintf(" … (%d bytes left out) … ", len(message)-maxErrorBytes) + message[len(message)-maxErrorBytes/2:]
	}
	return Result{OK: false, Error: message, Reason: reason}
}

// renderError carries the reason a render failed with up to the result.
type renderError struct {
	reason string
	msg    string
}

func (e *renderError) Error() string { return e.msg }

func invalid(msg string) error     { return &renderError{reasonInvalid, msg} }
func overLimit(msg string) error   { return &renderError{reasonLimit, msg} }
func unsupported(msg string) error { return &renderError{reasonUnsupported, msg} }

func failureFrom(err error) Result {
	var re *renderError
	if errors.As(err, &re) {
		return failure(re.reason, re.msg)
	}
	return failure(reasonInvalid, err.Error())
}

var finishOnce sync.Once

// finish writes the result and exits; the memory watchdog may call it from its own goroutine
// while the render is still running, so only the first call writes.
func finish(r Result) {
	finishOnce.Do(func() {
		out, err := json.Marshal(r)
		if err != nil {
			out = []byte(`{"ok":false,"reason":"invalid","error":"the result could not be encoded"}`)
		}
		_, _ = os.Stdout.Write(append(out, '\n'))
		os.Exit(0)
	})
	select {} // another goroutine is writing the result and exiting
}
