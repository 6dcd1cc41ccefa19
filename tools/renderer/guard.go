package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"
)

// lockDown takes away what a hostile input could reach through a library, before the job is
// read. The sandbox around the process (no network namespace, an unprivileged user, resource
// limits) is the wall; this is the second one, and the only one when the process runs bare.
func lockDown() {
	// Nothing here reads the environment; a library that would (PATH to find `git` or `helm`,
	// proxies, HOME) finds nothing.
	os.Clearenv()
	// Another process of the same user (a concurrent render of another tenant) cannot ptrace this
	// one or read its memory through /proc.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	// Every HTTP client that uses the default transport (kustomize's remote files, Helm's schema
	// loader) is refused before it dials; so is any other dial through a default dialer.
	http.DefaultTransport = refusingTransport{}
	http.DefaultClient = &http.Client{Transport: refusingTransport{}}
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: refuseDial}
	// A runaway recursion fails at 64 MiB of stack instead of Go's 1 GiB default.
	debug.SetMaxStack(64 << 20)
}

const noNetwork = "network access is not supported: the hub renders without a network"

type refusingTransport struct{}

func (refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, unsupported(fmt.Sprintf("%s (%s %s)", noNetwork, req.Method, req.URL.Redacted()))
}

func refuseDial(context.Context, string, string) (net.Conn, error) {
	return nil, unsupported(noNetwork)
}

// watchCPU turns the CPU-time limit's first warning (SIGXCPU at the soft limit; the sandbox sets
// the hard limit a second later) into a "limit" result instead of a kill.
func watchCPU() {
	warned := make(chan os.Signal, 1)
	signal.Notify(warned, syscall.SIGXCPU)
	go func() {
		<-warned
		finish(failure(reasonLimit, "the render used more CPU time than its limit"))
	}()
}

// watchMemory ends the render with a "limit" result when the heap grows past its budget: a
// template that loops into huge output (Helm renders into strings in memory) is stopped with a
// clear answer before the address-space limit kills the process. The GC is told the same
// budget, so garbage is collected harder before live data is blamed.
func watchMemory(budget int64) {
	debug.SetMemoryLimit(budget)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			metrics.Read(sample)
			if used := sample[0].Value.Uint64(); used > uint64(budget) {
				finish(failure(reasonLimit, fmt.Sprintf("the render used more than %d MiB of memory", budget>>20)))
			}
		}
	}()
}
