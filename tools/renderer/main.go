// brokkr-render renders one tenant's Helm chart or kustomize overlay: one JSON job on stdin, one
// JSON result on stdout. It reads no file and opens no connection of its own: the job carries the
// archive's bytes, which are unpacked in memory. It exits 0 for a render error too (the result
// says why); a non-zero exit means the process itself failed (a limit of its sandbox, a crash).
//
//	brokkr-render < job.json > result.json
//	brokkr-render --version
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxJobBytes bounds what is read from stdin: the caller caps the archive before it sends it;
// this only keeps a runaway writer from filling the process's memory.
const maxJobBytes = 512 << 20

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(versionString())
		return
	}
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: brokkr-render < job.json  |  brokkr-render --version")
		os.Exit(2)
	}
	lockDown()
	watchCPU()
	job, err := readJob(os.Stdin)
	if err != nil {
		finish(failure(reasonInvalid, err.Error()))
		return
	}
	watchMemory(job.Limits.HeapBytes)
	finish(run(job))
}

func readJob(in io.Reader) (*Job, error) {
	raw, err := io.ReadAll(io.LimitReader(in, maxJobBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the job: %w", err)
	}
	if len(raw) > maxJobBytes {
		return nil, fmt.Errorf("the job is larger than %d bytes", maxJobBytes)
	}
	job := &Job{}
	if err := json.Unmarshal(raw, job); err != nil {
		return nil, fmt.Errorf("the job is not valid JSON: %w", err)
	}
	job.Limits = job.Limits.withDefaults()
	return job, nil
}

// run renders the job; a panic inside an engine (hostile input reaching a bug) is a failed
// render, not a crash.
func run(job *Job) (result Result) {
	defer func() {
		if r := recover(); r != nil {
			result = failure(reasonInvalid, fmt.Sprintf("the render failed: %v", r))
		}
	}()
	switch job.Kind {
	case "helm":
		return renderHelm(job)
	case "kustomize":
		return renderKustomize(job)
	default:
		return failure(reasonInvalid, fmt.Sprintf("unknown kind %q (helm or kustomize)", job.Kind))
	}
}
